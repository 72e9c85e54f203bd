//go:build linux

// Command procfiles measures what reading a thread's /proc files costs on
// this machine: for every thread of a process, the open, the read and the
// close of each file that backtrail dump reads per thread (stat, schedstat,
// syscall) and of status, which could stand for stat and schedstat, each
// step over all threads in turn, against getpid, the cheapest system
// call. It explains the floor under a dump of many threads (bench/dump.md,
// ninth round).
//
// usage: go run ./bench/procfiles PID
package main

import (
	"fmt"
	"log"
	"os"
	"strconv"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: procfiles PID")
	}
	pid, err := strconv.Atoi(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	d, err := os.Open(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		log.Fatal(err)
	}
	tids, err := d.Readdirnames(-1)
	if err != nil {
		log.Fatal(err)
	}
	dfd := int(d.Fd())
	per := func(what string, since time.Time) {
		fmt.Printf("%-16s %6.2f µs per thread\n", what, float64(time.Since(since).Nanoseconds())/1e3/float64(len(tids)))
	}
	fmt.Printf("%d threads\n", len(tids))
	var buf [2048]byte
	for round := 1; round <= 2; round++ {
		fmt.Printf("round %d\n", round)
		t := time.Now()
		for range tids {
			syscall.Getpid()
		}
		per("getpid", t)
		for _, name := range []string{"stat", "schedstat", "syscall", "status"} {
			fds := make([]int, len(tids))
			t = time.Now()
			for i, tid := range tids {
				if fds[i], err = syscall.Openat(dfd, tid+"/"+name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err != nil {
					log.Fatalf("%s/%s: %v", tid, name, err)
				}
			}
			per("open "+name, t)
			t = time.Now()
			for i, fd := range fds {
				// A thread that exited meanwhile would make the read look cheap.
				if _, err := syscall.Pread(fd, buf[:], 0); err != nil {
					log.Fatalf("%s/%s: %v", tids[i], name, err)
				}
			}
			per("read "+name, t)
			t = time.Now()
			for _, fd := range fds {
				syscall.Close(fd)
			}
			per("close "+name, t)
		}
	}
}
