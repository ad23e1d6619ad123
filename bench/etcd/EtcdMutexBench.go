// etcd's own lock, clientv3/concurrency.Mutex, timed as zklock bench times
// zklock's etcd backend: the Go Mutex row of `zklock bench --backend etcd
// --baselines` (and --report), on the same etcd server in the same run.
// bench/etcd/run.sh builds it with Debian's golang-go against the clientv3
// sources of golang-etcd-server-dev (GOPATH mode, offline).
//
//	EtcdMutexBench --connect HOST:PORT[,...] --scenario uncontended|contended
//	               --clients K --ops N --path PREFIX [--warmup W] [--ttl S]
//	               [--cacert F] [--cert F --key F]
//
// uncontended: one client, one session; a sample is Lock() then Unlock(),
// each returning once etcd answered (as the bench's uncontended rows).
// contended: K clients, each with its own connection and session (its own
// lease), on one prefix; a sample is the wait from asking to the grant; the
// handoff is from a holder's Unlock() call to the next grant.
//
// Prints one JSON line: backend "etcd-go-mutex", scenario, clients, ops,
// p50_us, p99_us, mean_us, ops_per_s, wall_s (contended: handoff_p50_us).
// Takes no credentials.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io/ioutil"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/clientv3"
	"go.etcd.io/etcd/clientv3/concurrency"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "etcd-mutex-bench: "+format+"\n", args...)
	os.Exit(1)
}

func percentile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return 0
	}
	c := append([]float64(nil), s...)
	sort.Float64s(c)
	i := int(q * float64(len(c)-1))
	return c[i]
}

func mean(s []float64) float64 {
	if len(s) == 0 {
		return 0
	}
	t := 0.0
	for _, v := range s {
		t += v
	}
	return t / float64(len(s))
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000.0 }

type config struct {
	endpoints []string
	tls       *tls.Config
	ttl       int
}

func open(c config) (*clientv3.Client, *concurrency.Session) {
	client, err := clientv3.New(clientv3.Config{Endpoints: c.endpoints, DialTimeout: 10 * time.Second, TLS: c.tls})
	if err != nil {
		fail("connect: %v", err)
	}
	session, err := concurrency.NewSession(client, concurrency.WithTTL(c.ttl))
	if err != nil {
		fail("session: %v", err)
	}
	return client, session
}

func cycle(m *concurrency.Mutex) {
	if err := m.Lock(context.Background()); err != nil {
		fail("lock: %v", err)
	}
	if err := m.Unlock(context.Background()); err != nil {
		fail("unlock: %v", err)
	}
}

type grant struct{ requested, granted, released time.Time }

func main() {
	connect := flag.String("connect", "", "HOST:PORT of an etcd member (several: comma separated)")
	scenario := flag.String("scenario", "uncontended", "uncontended or contended")
	clients := flag.Int("clients", 8, "contended: clients, each with its own connection and session")
	ops := flag.Int("ops", 2000, "measured acquisitions")
	warmup := flag.Int("warmup", 200, "unmeasured cycles first (uncontended)")
	prefix := flag.String("path", "", "the Mutex's prefix")
	ttl := flag.Int("ttl", 10, "each session's lease, seconds")
	cacert := flag.String("cacert", "", "TLS: the CA file (https:// endpoints)")
	cert := flag.String("cert", "", "TLS: the client certificate file")
	key := flag.String("key", "", "TLS: the client key file")
	flag.Parse()
	if *connect == "" || *prefix == "" {
		fail("--connect and --path are required")
	}
	if *scenario != "uncontended" && *scenario != "contended" {
		fail("--scenario is uncontended or contended, not %q", *scenario)
	}
	if *ops < 1 || *clients < 1 || *warmup < 0 {
		fail("--ops and --clients must be at least 1, --warmup at least 0")
	}
	c := config{ttl: *ttl}
	scheme := "http://"
	if *cacert != "" || *cert != "" {
		scheme = "https://"
		c.tls = &tls.Config{}
		if *cacert != "" {
			pem, err := ioutil.ReadFile(*cacert)
			if err != nil {
				fail("--cacert: %v", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				fail("--cacert: no certificate in %s", *cacert)
			}
			c.tls.RootCAs = pool
		}
		if *cert != "" {
			pair, err := tls.LoadX509KeyPair(*cert, *key)
			if err != nil {
				fail("--cert/--key: %v", err)
			}
			c.tls.Certificates = []tls.Certificate{pair}
		}
	}
	for _, e := range strings.Split(*connect, ",") {
		if strings.Contains(e, "://") {
			c.endpoints = append(c.endpoints, e)
		} else {
			c.endpoints = append(c.endpoints, scheme+e)
		}
	}

	for _, e := range c.endpoints {
		if strings.HasPrefix(e, "https://") && c.tls == nil {
			c.tls = &tls.Config{} // the system's CAs
		}
	}

	out := map[string]interface{}{"backend": "etcd-go-mutex", "scenario": *scenario, "ops": *ops}
	if *scenario == "uncontended" {
		client, session := open(c)
		m := concurrency.NewMutex(session, *prefix)
		for i := 0; i < *warmup; i++ {
			cycle(m)
		}
		samples := make([]float64, 0, *ops)
		start := time.Now()
		for i := 0; i < *ops; i++ {
			t0 := time.Now()
			cycle(m)
			samples = append(samples, micros(time.Since(t0)))
		}
		wall := time.Since(start).Seconds()
		session.Close()
		client.Close()
		out["clients"] = 1
		out["p50_us"], out["p99_us"], out["mean_us"] = percentile(samples, 0.5), percentile(samples, 0.99), mean(samples)
		out["ops_per_s"], out["wall_s"] = float64(len(samples))/wall, wall
	} else {
		type peer struct {
			client  *clientv3.Client
			session *concurrency.Session
			mutex   *concurrency.Mutex
			grants  []grant
		}
		peers := make([]*peer, *clients)
		for i := range peers {
			cl, s := open(c)
			peers[i] = &peer{client: cl, session: s, mutex: concurrency.NewMutex(s, *prefix)}
		}
		remaining := int64(*ops)
		var ready, done sync.WaitGroup
		begin := make(chan struct{})
		ready.Add(len(peers))
		done.Add(len(peers))
		for _, p := range peers {
			go func(p *peer) {
				defer done.Done()
				ready.Done()
				<-begin
				for {
					var g grant
					g.requested = time.Now()
					if err := p.mutex.Lock(context.Background()); err != nil {
						fail("lock: %v", err)
					}
					g.granted = time.Now()
					last := atomic.AddInt64(&remaining, -1) < 0
					g.released = time.Now()
					if err := p.mutex.Unlock(context.Background()); err != nil {
						fail("unlock: %v", err)
					}
					if last {
						return
					}
					p.grants = append(p.grants, g)
				}
			}(p)
		}
		ready.Wait()
		start := time.Now()
		close(begin)
		done.Wait()
		var all []grant
		for _, p := range peers {
			all = append(all, p.grants...)
			p.session.Close()
			p.client.Close()
		}
		sort.Slice(all, func(i, j int) bool { return all[i].granted.Before(all[j].granted) })
		var waits, handoffs []float64
		for i, g := range all {
			waits = append(waits, micros(g.granted.Sub(g.requested)))
			if i > 0 {
				handoffs = append(handoffs, micros(g.granted.Sub(all[i-1].released)))
			}
		}
		wall := all[len(all)-1].granted.Sub(start).Seconds()
		out["clients"] = *clients
		out["p50_us"], out["p99_us"], out["mean_us"] = percentile(waits, 0.5), percentile(waits, 0.99), mean(waits)
		out["ops_per_s"], out["wall_s"] = float64(len(waits))/wall, wall
		out["handoff_p50_us"] = percentile(handoffs, 0.5)
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
}
