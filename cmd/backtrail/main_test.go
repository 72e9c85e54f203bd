package main

import (
	"os"
	"testing"

	"github.com/backtrail/backtrail/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}
