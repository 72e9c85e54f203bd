package backtrail

import "testing"

type tableEntry struct {
	key   int
	stale bool
}

func byKey(key int) func(*tableEntry) bool {
	return func(e *tableEntry) bool { return e.key == key }
}

// TestTable checks the interning table's probing: keys that share a hash
// each get a slot and are told apart by match; a lookup under another hash
// never reaches an entry, even one its match would accept; a full probe
// window evicts the home slot; and a stale entry gives its slot to the next
// entry under the same hash only.
func TestTable(t *testing.T) {
	tb := newTable[tableEntry](64)
	const h = 5
	var entries []*tableEntry
	for key := range tableProbes {
		e := &tableEntry{key: key}
		if got := tb.insert(h, e, byKey(key)); got != e {
			t.Fatalf("insert of key %d returned key %d", key, got.key)
		}
		entries = append(entries, e)
	}
	for key, e := range entries {
		if got := tb.find(h, byKey(key)); got != e {
			t.Errorf("find(key %d) = %v, want the entry inserted", key, got)
		}
		if got := tb.insert(h, &tableEntry{key: key}, byKey(key)); got != e {
			t.Errorf("a second insert of key %d did not return the first entry", key)
		}
	}
	if got := tb.find(h+1, byKey(1)); got != nil {
		t.Errorf("find under another hash reached key %d", got.key)
	}

	// The window of hash h is full: a new key evicts the home slot's.
	e := &tableEntry{key: 100}
	if got := tb.tryInsert(h, e, byKey(100)); got != nil {
		t.Fatalf("tryInsert into a full window returned key %d", got.key)
	}
	if got := tb.insert(h, e, byKey(100)); got != e || tb.find(h, byKey(100)) != e {
		t.Fatal("insert into a full window did not store the entry")
	}
	if got := tb.find(h, byKey(0)); got != nil {
		t.Errorf("the evicted key 0 is still found")
	}

	// A stale entry is passed over by an entry under another hash, and
	// replaced in place by the next entry under its own hash.
	st := newTable[tableEntry](64)
	st.stale = func(e *tableEntry) bool { return e.stale }
	old := &tableEntry{key: 1, stale: true}
	st.insert(9, old, byKey(1)) // slot 9
	a, b := &tableEntry{key: 2}, &tableEntry{key: 3}
	st.insert(8, a, byKey(2)) // slot 8
	st.insert(8, b, byKey(3)) // not slot 9: another hash's entry
	if st.slots[9].entry.Load() != old || st.slots[10].entry.Load() != b {
		t.Error("an entry under another hash took a stale entry's slot")
	}
	fresh := &tableEntry{key: 1}
	if got := st.insert(9, fresh, func(e *tableEntry) bool { return e.key == 1 && !e.stale }); got != fresh {
		t.Fatal("insert did not store the fresh entry")
	}
	if st.slots[9].entry.Load() != fresh || st.find(9, byKey(1)) != fresh {
		t.Error("the fresh entry did not take the stale entry's slot")
	}
}

// TestTableConcurrentInsert checks that goroutines inserting one new key at
// the same moment all get the same entry: one that finds another's entry
// before its hash is written must still see it is the same key.
func TestTableConcurrentInsert(t *testing.T) {
	const rounds, workers = 20000, 4
	tb := newTable[tableEntry](1 << 16)
	for r := range rounds {
		h := uint64(r) * 0x9e3779b97f4a7c15
		start := make(chan struct{})
		got := make(chan *tableEntry, workers)
		for range workers {
			go func() {
				<-start
				got <- tb.insert(h, &tableEntry{key: r}, byKey(r))
			}()
		}
		close(start)
		first := <-got
		for range workers - 1 {
			if e := <-got; e != first {
				t.Fatalf("round %d: two entries for one key", r)
			}
		}
	}
}
