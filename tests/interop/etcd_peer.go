// An etcd lock client for zklock's interop tests
// (tests/integration/test_interop_etcd.cpp), built at configure time with
// Debian's golang-go against golang-etcd-server-dev's clientv3 (GOPATH mode).
//
// Takes etcd's own concurrency.Mutex on a prefix and reports on stdout, one
// line per event, with CLOCK_MONOTONIC nanoseconds (the clock the C++ test
// reads too):
//
//	key NAME KEY       the key its Mutex queues with (<prefix>/<lease id in hex>)
//	ready NAME T       connected (its session's lease granted), before the first acquire
//	acquired NAME T    the lock is held from T on
//	releasing NAME T   the lock is held until T (then released)
//	done NAME COUNT    finished; exit status 0
//
//	--mode churn   acquire and release --iterations times, reading the prefix
//	               once per critical section (a server round trip while holding);
//	               with --wait-for-go it starts on SIGUSR1 (after "ready")
//	--mode hold    acquire once, hold until SIGUSR1, release, exit
//	--mode cycles  acquire and release --iterations times back to back (no
//	               read, no report per cycle), then print
//	               "cycles NAME COUNT NANOSECONDS": the bench's Go Mutex peer
//
// An acquire that takes longer than --timeout ends the process with exit
// status 1 and a message on stderr. Configured by argv only; it takes no
// credentials.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"go.etcd.io/etcd/clientv3"
	"go.etcd.io/etcd/clientv3/concurrency"
)

// monotonicNs reads CLOCK_MONOTONIC (Go's time package keeps its monotonic
// reading private).
func monotonicNs() int64 {
	var ts syscall.Timespec
	const clockMonotonic = 1
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		fail("clock_gettime: %v", errno)
	}
	return ts.Nano()
}

func emit(words ...interface{}) {
	fmt.Fprintln(os.Stdout, words...)
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "etcd_peer: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	connect := flag.String("connect", "", "HOST:PORT of an etcd member (several: comma separated)")
	prefix := flag.String("path", "", "the Mutex's prefix, e.g. zklock/job")
	name := flag.String("name", "", "this client's name in the report")
	mode := flag.String("mode", "hold", "churn, hold or cycles")
	iterations := flag.Int("iterations", 1, "churn mode: acquisitions")
	waitForGo := flag.Bool("wait-for-go", false, "churn mode: start on SIGUSR1")
	ttl := flag.Int("ttl", 10, "the session's lease, seconds")
	timeout := flag.Duration("timeout", 60*time.Second, "give up an acquire after this long")
	flag.Parse()
	if *connect == "" || *prefix == "" || *name == "" {
		fail("--connect, --path and --name are required")
	}
	if *mode != "churn" && *mode != "hold" && *mode != "cycles" {
		fail("--mode is churn, hold or cycles, not %q", *mode)
	}
	if *iterations < 1 {
		fail("--iterations must be at least 1")
	}
	rounds := 1
	if *mode != "hold" {
		rounds = *iterations
	}

	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)

	var endpoints []string
	for _, e := range strings.Split(*connect, ",") {
		endpoints = append(endpoints, "http://"+e)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 10 * time.Second})
	if err != nil {
		fail("connect: %v", err)
	}
	defer client.Close()
	session, err := concurrency.NewSession(client, concurrency.WithTTL(*ttl))
	if err != nil {
		fail("session: %v", err)
	}
	defer session.Close()
	mutex := concurrency.NewMutex(session, *prefix)
	emit("key", *name, fmt.Sprintf("%s/%x", *prefix, session.Lease()))
	emit("ready", *name, monotonicNs())
	if *waitForGo {
		<-usr1
	}
	if *mode == "cycles" {
		start := monotonicNs()
		for i := 0; i < rounds; i++ {
			if err := mutex.Lock(context.Background()); err != nil {
				fail("%s: lock: %v", *name, err)
			}
			if err := mutex.Unlock(context.Background()); err != nil {
				fail("%s: unlock: %v", *name, err)
			}
		}
		emit("cycles", *name, rounds, monotonicNs()-start)
		return
	}
	count := 0
	for i := 0; i < rounds; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		if err := mutex.Lock(ctx); err != nil {
			fail("%s: lock: %v", *name, err)
		}
		cancel()
		emit("acquired", *name, monotonicNs())
		if *mode == "churn" {
			if _, err := client.Get(context.Background(), *prefix+"/", clientv3.WithPrefix()); err != nil {
				fail("%s: get: %v", *name, err)
			}
		} else {
			<-usr1
		}
		emit("releasing", *name, monotonicNs())
		if err := mutex.Unlock(context.Background()); err != nil {
			fail("%s: unlock: %v", *name, err)
		}
		count++
	}
	emit("done", *name, count)
}
