package dump_test

import (
	"strings"
	"testing"

	"github.com/backtrail/backtrail/dump"
)

func TestParseMaps(t *testing.T) {
	in := `7f0000001000-7f0000002000 r-xp 00001000 fd:01 1234                       /usr/lib/libc.so.6
55d000000000-55d000001000 r--p 00000000 fd:01 99                         /opt/my app/bin/server (deleted)
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
7f0000003000-7f0000004000 rw-p 00000000 00:00 0 
garbage line
7f0000005000-7f0000004000 r--p 00000000 00:00 0
7f000000g000-7f0000008000 r--p 00000000 00:00 0
7f0000009000-7f000000a000 r--p 00000000 00:00 123456789012345678901
7f000000b000-7f000000c000 r--p 00000000 00:00 18446744073709551615 /big/inode
`
	maps, err := dump.ParseMaps(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []dump.Mapping{
		{Start: 0x55d000000000, End: 0x55d000001000, Perms: "r--p", Offset: 0, Dev: "fd:01", Inode: 99, Path: "/opt/my app/bin/server", Deleted: true},
		{Start: 0x7f0000001000, End: 0x7f0000002000, Perms: "r-xp", Offset: 0x1000, Dev: "fd:01", Inode: 1234, Path: "/usr/lib/libc.so.6"},
		{Start: 0x7f0000003000, End: 0x7f0000004000, Perms: "rw-p", Dev: "00:00"},
		{Start: 0x7f000000b000, End: 0x7f000000c000, Perms: "r--p", Dev: "00:00", Inode: 18446744073709551615, Path: "/big/inode"},
		{Start: 0x7ffd00000000, End: 0x7ffd00021000, Perms: "rw-p", Dev: "00:00", Path: "[stack]"},
	}
	if len(maps) != len(want) {
		t.Fatalf("%d mappings, want %d: %+v", len(maps), len(want), maps)
	}
	for i := range want {
		if maps[i] != want[i] {
			t.Errorf("mapping %d:\nhave %+v\nwant %+v", i, maps[i], want[i])
		}
	}
	if !maps[1].Exec() || maps[0].Exec() || !maps[1].File() || maps[2].File() || maps[4].File() || !maps[4].Readable() {
		t.Errorf("Exec/File/Readable wrong")
	}
}

func TestWriteText(t *testing.T) {
	d := &dump.Process{PID: 7, Name: "srv", Notes: []string{"a note"}, Threads: []dump.Thread{
		{TID: 7, Name: "srv", Frames: []dump.Frame{
			{Index: 0, PC: 0x7f0000001234, Function: "inner", File: "a.c", Line: 3, Module: "srv", Inlined: true},
			{Index: 0, PC: 0x7f0000001234, Function: "outer", File: "a.c", Line: 9, Module: "srv"},
			{Index: 10, PC: 0x401000, Module: "srv"},
			{Index: 11, PC: 0xffffffffffffffff},
		}, Truncated: true},
		{TID: 8, Name: "w", Stop: "no unwind information for pc 0x1"},
	}}
	var b strings.Builder
	if err := d.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `PID 7 - process srv
# a note
TID 7 (srv):
#0  0x00007f0000001234 inner (a.c:3) [srv] (inlined)
#0  0x00007f0000001234 outer (a.c:9) [srv]
#10 0x0000000000401000 ?? [srv]
#11 0xffffffffffffffff ??
... truncated
TID 8 (w):
# unwinding stopped: no unwind information for pc 0x1
`
	if b.String() != want {
		t.Errorf("have\n%s\nwant\n%s", b.String(), want)
	}
}

func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		in      string
		comm    string
		state   byte
		ppid    int
		cpu     int
		rtPrio  int
		threads int
		wantErr bool
	}{
		{in: "1234 (worker-7) S 1200 1234 1200 0 -1 4194368 95 0 0 0", comm: "worker-7", state: 'S', ppid: 1200, cpu: -1},
		// A whole line as Linux 6.18 writes it: the CPU is field 39.
		{in: "31212 (heartbeat) S 31208 31211 31208 0 -1 4194368 0 0 0 0 6 189 0 0 20 0 1002 0 940164 11102154752 " +
			"39 18446744073709551615 94585049370624 94585049383121 140726300233264 0 0 0 0 0 0 0 0 0 -1 1 0 0 0 0 0 " +
			"94585049394192 94585049395032 94585066528768 140726300238171 140726300238190 140726300238190 140726300241891 0\n",
			comm: "heartbeat", state: 'S', ppid: 31208, cpu: 1, threads: 1002},
		// A SCHED_FIFO thread: rt_priority 80 (field 40), policy 1.
		{in: "31213 (heartbeat-rt) S 31208 31211 31208 0 -1 4194368 0 0 0 0 6 189 0 0 -81 0 1002 0 940164 11102154752 " +
			"39 18446744073709551615 94585049370624 94585049383121 140726300233264 0 0 0 0 0 0 0 0 0 -1 0 80 1 0 0 0 " +
			"94585049394192 94585049395032 94585066528768 140726300238171 140726300238190 140726300238190 140726300241891 0\n",
			comm: "heartbeat-rt", state: 'S', ppid: 31208, cpu: 0, rtPrio: 80, threads: 1002},
		// A name may hold spaces and ") ": the last ')' ends it.
		{in: "99 (a) b) (c) R 1 99 99 0", comm: "a) b) (c", state: 'R', ppid: 1, cpu: -1},
		{in: "5 (z) Z 17\n", comm: "z", state: 'Z', ppid: 17, cpu: -1},
		{in: "5 (x) S", wantErr: true},
		{in: "5 x S 1", wantErr: true},
	} {
		st, err := dump.ParseStat([]byte(c.in))
		if (err != nil) != c.wantErr {
			t.Errorf("%q: error %v, want error %v", c.in, err, c.wantErr)
			continue
		}
		if !c.wantErr && (st.Comm != c.comm || st.State != c.state || st.PPID != c.ppid || st.CPU != c.cpu || st.RTPriority != c.rtPrio || st.Threads != c.threads) {
			t.Errorf("%q: have %q %c %d cpu %d rt %d threads %d, want %q %c %d cpu %d rt %d threads %d", c.in, st.Comm, st.State, st.PPID, st.CPU, st.RTPriority, st.Threads, c.comm, c.state, c.ppid, c.cpu, c.rtPrio, c.threads)
		}
	}
}
