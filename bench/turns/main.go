//go:build linux

// Command turns compares builds of backtrail on one dump: it runs
// "BIN dump PID" for each BIN in turn, n times over (the order reversed
// every other round, so that neither build always follows the other), and
// prints for each build the median wall time, taken around the child from
// its start to its reaping, the median CPU time (user and system) and the
// median count of page faults, from the child's resource usage. It is the
// quick comparison of bench/dump.md's eleventh round, whose figures came
// from the same loop written in Python; bench/dump.sh measures the peers
// and the target's pauses as well.
//
// usage: go run ./bench/turns [-n N] PID BIN...
package main

import (
	"flag"
	"fmt"
	"log"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 20, "rounds")
	flag.Parse()
	if flag.NArg() < 2 {
		log.Fatal("usage: turns [-n N] PID BIN...")
	}
	pid, bins := flag.Arg(0), flag.Args()[1:]
	walls := make([][]time.Duration, len(bins))
	cpus := make([][]time.Duration, len(bins))
	faults := make([][]int64, len(bins))
	for r := range *n {
		for k := range bins {
			i := k
			if r%2 == 1 {
				i = len(bins) - 1 - k
			}
			cmd := exec.Command(bins[i], "dump", pid)
			t0 := time.Now()
			if err := cmd.Run(); err != nil {
				log.Fatalf("%s: %v", bins[i], err)
			}
			walls[i] = append(walls[i], time.Since(t0))
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			cpus[i] = append(cpus[i], time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
			faults[i] = append(faults[i], int64(ru.Minflt))
		}
	}
	for i, b := range bins {
		slices.Sort(walls[i])
		slices.Sort(cpus[i])
		slices.Sort(faults[i])
		fmt.Printf("%s: wall median %.1f ms (min %.1f), CPU median %.1f ms, page faults median %d, %d runs\n",
			b, ms(walls[i][*n/2]), ms(walls[i][0]), ms(cpus[i][*n/2]), faults[i][*n/2], *n)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
