package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/backtrail/backtrail/debugfile"
)

func init() {
	register(&command{
		name:  "debugfile info",
		args:  "[--json] PATH...",
		short: "show a debug file's identifiers, architectures and features",
		long: `
Debugfile info prints, for each object in each file (one per architecture of
a fat Mach-O file), its format and kind, architecture, the debug_id and
code_id crash reports refer to it by, the GNU build-id or Mach-O UUID and Go
build ID, the image's preferred load address and size, and which
symbolication data it holds: symbol table, debug information (DWARF), unwind
information, Go pclntab. PATH may be a .dSYM bundle. For a binary built
with -gsplit-dwarf it counts the skeleton units and those whose split DWARF
(PATH.dwp or the .dwo files, as symbolize finds them) is missing.

With --json it prints one JSON object per file.
`,
		flags: func(fs *flag.FlagSet) {
			fs.Bool("json", false, "print JSON")
		},
		run: runDebugfileInfo,
	})
}

type objectInfo struct {
	Format      string             `json:"format"`
	Kind        string             `json:"kind"`
	Arch        string             `json:"arch"`
	DebugID     string             `json:"debug_id"`
	CodeID      string             `json:"code_id,omitempty"`
	BuildID     string             `json:"build_id,omitempty"`
	GoBuildID   string             `json:"go_build_id,omitempty"`
	ImageVMAddr string             `json:"image_vmaddr"`
	ImageSize   uint64             `json:"image_size"`
	Features    debugfile.Features `json:"features"`
	Split       *splitInfo         `json:"split,omitempty"`
}

// splitInfo counts the skeleton units of split DWARF, and those whose
// split unit was not found, with why.
type splitInfo struct {
	Units   int      `json:"units"`
	Missing []string `json:"missing,omitempty"`
}

type fileInfo struct {
	Path    string       `json:"path"`
	Objects []objectInfo `json:"objects"`
}

func runDebugfileInfo(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	if len(args) == 0 {
		return usagef("no PATH given")
	}
	asJSON := fs.Lookup("json").Value.String() == "true"
	for _, p := range args {
		f, err := debugfile.Open(p)
		if err != nil {
			return err
		}
		fi := fileInfo{Path: f.Path}
		for _, o := range f.Objects {
			oi := objectInfo{
				Format: o.Format.String(), Kind: o.Kind.String(), Arch: o.Arch,
				DebugID: o.DebugID.String(), CodeID: o.CodeID, GoBuildID: o.GoBuildID,
				ImageVMAddr: fmt.Sprintf("%#x", o.ImageVMAddr), ImageSize: o.ImageSize, Features: o.Features,
			}
			if len(o.BuildID) > 0 {
				oi.BuildID = fmt.Sprintf("%x", o.BuildID)
			}
			if o.Format == debugfile.FormatELF && len(f.Objects) == 1 {
				f.FollowSplitDWARF(f.Path, "")
				if n := countSkeletons(o); n > 0 {
					oi.Split = &splitInfo{Units: n}
					for _, err := range f.SplitDWARFErrors() {
						oi.Split.Missing = append(oi.Split.Missing, err.Error())
					}
				}
			}
			fi.Objects = append(fi.Objects, oi)
		}
		f.Close()
		if asJSON {
			writeJSONLine(e.stdout, fi)
			continue
		}
		fmt.Fprintf(e.stdout, "%s\n", fi.Path)
		for _, o := range fi.Objects {
			fmt.Fprintf(e.stdout, "  %s %s %s\n", o.Arch, o.Format, o.Kind)
			fmt.Fprintf(e.stdout, "    debug_id:     %s\n", o.DebugID)
			if o.CodeID != "" {
				fmt.Fprintf(e.stdout, "    code_id:      %s\n", o.CodeID)
			}
			if o.GoBuildID != "" {
				fmt.Fprintf(e.stdout, "    go_build_id:  %s\n", o.GoBuildID)
			}
			fmt.Fprintf(e.stdout, "    image:        %s, %#x bytes\n", o.ImageVMAddr, o.ImageSize)
			fmt.Fprintf(e.stdout, "    features:     %s\n", featureList(o.Features))
			if sp := o.Split; sp != nil {
				fmt.Fprintf(e.stdout, "    split DWARF:  %d units, %d without their split file\n", sp.Units, len(sp.Missing))
				for _, m := range sp.Missing {
					fmt.Fprintf(e.stdout, "      %s\n", m)
				}
			}
		}
	}
	return nil
}

func featureList(f debugfile.Features) string {
	var s []string
	for _, x := range []struct {
		on   bool
		name string
	}{{f.Symtab, "symtab"}, {f.DebugInfo, "debug"}, {f.UnwindInfo, "unwind"}, {f.Pclntab, "go_pclntab"}, {f.DebugOnly, "debug_only"}} {
		if x.on {
			s = append(s, x.name)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
