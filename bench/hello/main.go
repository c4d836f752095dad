// Command hello is the floor of BenchmarkCLIStartup: the smallest Go
// program that writes a line, built the way leo is (no cgo).
package main

import "os"

func main() { _, _ = os.Stdout.WriteString("hello\n") }
