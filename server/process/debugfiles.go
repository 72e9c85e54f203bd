package process

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/symcache"
)

// AddDebugFile stores one debug file in blobs and records each of its
// objects (one per architecture) for a project. added lists the records
// that are new. A file the readers reject is the uploader's error
// (EINVALID).
func AddDebugFile(ctx context.Context, st server.Store, blobs server.Blobs, projectID int64, name string, r io.Reader) (all, added []*server.DebugFile, err error) {
	addr, size, err := blobs.Put(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	path, err := blobs.Path(ctx, addr)
	if err != nil {
		return nil, nil, err
	}
	objs, err := openObjects(path, name)
	if err != nil {
		return nil, nil, err
	}
	for _, o := range objs {
		df, isNew, err := st.AddDebugFile(ctx, &server.DebugFile{
			ProjectID: projectID, DebugID: o.DebugID.String(), CodeID: o.CodeID, Arch: o.Arch,
			Format: o.Format, Kind: o.Kind, Name: name, Size: size, Blob: addr,
			Features: Features(o.Features),
		})
		if err != nil {
			return nil, nil, err
		}
		all = append(all, df)
		if isNew {
			added = append(added, df)
		}
	}
	return all, added, nil
}

// objectInfo is what the server keeps of one object of a debug file.
type objectInfo struct {
	DebugID  debugfile.DebugID
	CodeID   string
	Arch     string
	Format   string // debugfile.Format's name, or FormatSymcache
	Kind     string
	Features debugfile.Features
}

// FormatSymcache is the format of an uploaded symcache: the index
// `backtrail symcache build` makes, sent instead of a debug file too big
// to upload, or of one whose DWARF lives in other files (split DWARF).
const FormatSymcache = "symcache"

// openObjects reads the objects of a debug file, or the one a symcache
// describes. The readers never panic on hostile input by design; the
// recover makes a bug in them cost this file, not the server.
func openObjects(path, name string) (objs []objectInfo, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = server.Errorf(server.EINVALID, "%s: unreadable debug file", name)
		}
	}()
	invalid := func(err error) error {
		return &server.Error{Code: server.EINVALID, Message: fmt.Sprintf("%s: %v", name, err), Err: err}
	}
	if symcache.IsFile(path) {
		sc, err := symcache.Open(path)
		if err != nil {
			return nil, invalid(err)
		}
		defer sc.Close()
		// Checked whole once here, so that lookups never meet a bad
		// block of an upload.
		if err := sc.Check(); err != nil {
			return nil, invalid(err)
		}
		info := sc.Info() // its strings are views of the mapping Close ends
		files, funcs, _, _ := sc.Counts()
		return []objectInfo{{
			DebugID: debugfile.DebugID{UUID: info.DebugID, Age: info.DebugAge}, CodeID: strings.Clone(info.CodeID), Arch: strings.Clone(info.Arch),
			Format: FormatSymcache, Kind: debugfile.KindDebug.String(),
			Features: debugfile.Features{DebugInfo: files > 0, Symtab: funcs > 0, DebugOnly: true},
		}}, nil
	}
	f, err := debugfile.Open(path)
	if err != nil {
		return nil, invalid(err)
	}
	defer f.Close()
	for _, o := range f.Objects {
		objs = append(objs, objectInfo{o.DebugID, o.CodeID, o.Arch, o.Format.String(), o.Kind.String(), o.Features})
	}
	return objs, nil
}

// Features names the symbolication data of an object, as debug file
// records list them.
func Features(f debugfile.Features) []string {
	var out []string
	for _, x := range []struct {
		on   bool
		name string
	}{{f.Symtab, "symtab"}, {f.DebugInfo, "debug"}, {f.UnwindInfo, "unwind"}, {f.Pclntab, "go_pclntab"}} {
		if x.on {
			out = append(out, x.name)
		}
	}
	return out
}
