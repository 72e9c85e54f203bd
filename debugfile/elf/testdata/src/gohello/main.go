// Command gohello is built by the debugfile/elf tests (tools_test.go), with
// and without -ldflags="-s -w".
package main

import "fmt"

func main() { fmt.Println("hello, elf") }
