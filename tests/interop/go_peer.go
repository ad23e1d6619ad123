// A go-zookeeper lock client for zklock's interop tests
// (tests/integration/test_interop_go.cpp), built at configure time with Debian's
// golang-go against golang-github-samuel-go-zookeeper-dev (GOPATH mode).
//
// Takes go-zookeeper's zk.Lock on a lock path and reports on stdout, one line
// per event, with CLOCK_MONOTONIC nanoseconds (the clock the C++ test reads too):
//
//	ready NAME T       connected, before the first acquire
//	acquired NAME T    the lock is held from T on
//	releasing NAME T   the lock is held until T (then released)
//	done NAME COUNT    finished; exit status 0
//
//	--mode churn   acquire and release --iterations times, listing the lock path
//	               once per critical section (a server round trip while holding);
//	               with --wait-for-go it starts on SIGUSR1 (after "ready")
//	--mode hold    acquire once, hold until SIGUSR1, release, exit
//
// zk.Lock has no timeout: an acquire that takes longer than --timeout ends the
// process with exit status 1 and a message on stderr. The client's own log goes
// to stderr. Configured by argv only; it takes no credentials.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"
	"unsafe"

	"github.com/samuel/go-zookeeper/zk"
)

// monotonicNs reads CLOCK_MONOTONIC (Go's time package keeps its monotonic
// reading private).
func monotonicNs() int64 {
	var ts syscall.Timespec
	const clockMonotonic = 1
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		log.Fatalf("go_peer: clock_gettime: %v", errno)
	}
	return ts.Nano()
}

func emit(words ...interface{}) {
	fmt.Fprintln(os.Stdout, words...)
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "go_peer: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	connect := flag.String("connect", "", "HOST:PORT of the ZooKeeper server")
	path := flag.String("path", "", "lock path, e.g. /locks/job")
	name := flag.String("name", "", "this client's name in the report")
	mode := flag.String("mode", "hold", "churn or hold")
	iterations := flag.Int("iterations", 1, "churn mode: acquisitions")
	waitForGo := flag.Bool("wait-for-go", false, "churn mode: start on SIGUSR1")
	timeout := flag.Duration("timeout", 60*time.Second, "give up an acquire after this long")
	flag.Parse()
	if *connect == "" || *path == "" || *name == "" {
		fail("--connect, --path and --name are required")
	}
	if *mode != "churn" && *mode != "hold" {
		fail("--mode is churn or hold, not %q", *mode)
	}
	if *iterations < 1 {
		fail("--iterations must be at least 1")
	}
	rounds := 1
	if *mode == "churn" {
		rounds = *iterations
	}

	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)

	conn, events, err := zk.Connect([]string{*connect}, 10*time.Second,
		zk.WithLogger(log.New(os.Stderr, "go-zookeeper: ", log.LstdFlags)))
	if err != nil {
		fail("connect: %v", err)
	}
	defer conn.Close()
	deadline := time.After(30 * time.Second)
	for connected := false; !connected; {
		select {
		case ev := <-events:
			connected = ev.State == zk.StateHasSession
		case <-deadline:
			fail("no session within 30 s")
		}
	}

	lock := zk.NewLock(conn, *path, zk.WorldACL(zk.PermAll))
	emit("ready", *name, monotonicNs())
	if *waitForGo {
		<-usr1
	}
	count := 0
	for i := 0; i < rounds; i++ {
		acquired := make(chan error, 1)
		go func() { acquired <- lock.Lock() }()
		select {
		case err := <-acquired:
			if err != nil {
				fail("%s: lock: %v", *name, err)
			}
		case <-time.After(*timeout):
			fail("%s: no lock within %v", *name, *timeout)
		}
		emit("acquired", *name, monotonicNs())
		if *mode == "churn" {
			if _, _, err := conn.Children(*path); err != nil {
				fail("%s: children: %v", *name, err)
			}
		} else {
			<-usr1
		}
		emit("releasing", *name, monotonicNs())
		if err := lock.Unlock(); err != nil {
			fail("%s: unlock: %v", *name, err)
		}
		count++
	}
	emit("done", *name, count)
}
