package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md from the command table")

// TestCLIDoc checks that docs/cli.md is what the command table generates,
// so the reference never drifts from the binary's own help. Run with
// -update after changing a command.
func TestCLIDoc(t *testing.T) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# backtrail command reference\n\nGenerated from the command table by `go test ./cmd/backtrail -run TestCLIDoc -update`; do not edit.\n\n")
	printHelp(&buf)
	for _, c := range sortedCommands() {
		fmt.Fprintf(&buf, "\n## backtrail %s\n\n```\n", c.name)
		printCommandHelp(&buf, c)
		fmt.Fprintf(&buf, "```\n")
	}
	const path = "../../docs/cli.md"
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(have, buf.Bytes()) {
		t.Fatalf("docs/cli.md is out of date; run: go test ./cmd/backtrail -run TestCLIDoc -update")
	}
}

// TestUsageErrors checks the CLI's exit codes: 2 for usage errors and
// unknown commands, 0 for help.
func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"nosuch"}, 2},
		{[]string{"symbolize"}, 2},
		{[]string{"symbolize", "--output-style=XML", "--obj=x"}, 2},
		{[]string{"symbolize", "--nosuchflag"}, 2},
		{[]string{"help"}, 0},
		{[]string{"help", "symbolize"}, 0},
		{[]string{"symbolize", "--help"}, 0},
		{[]string{"debugfile", "info", "/nonexistent"}, 1},
	} {
		var out, errb bytes.Buffer
		e := &env{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errb}
		if code := run(t.Context(), e, tt.args); code != tt.code {
			t.Errorf("backtrail %v: exit %d, want %d\nstderr: %s", tt.args, code, tt.code, errb.String())
		}
	}
}
