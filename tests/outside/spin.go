// SPDX-License-Identifier: MIT
// spin.go - the Go program outside.t profiles from outside, built with
// CGO_ENABLED=0 (static) and -buildmode=pie: goroutines on threads the
// runtime makes with raw clone compute in main.work (plain Go, frame
// pointers kept); exit status 4. An argument K makes each goroutine's work
// K * 10,000,000 steps (default 40,000,000).
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

var sink uint64

//go:noinline
func work(n int) uint64 {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*2862933555777941757 + uint64(i) ^ (x >> 13)
	}
	return x
}

func main() {
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 40000000
	if len(os.Args) > 1 {
		if k, err := strconv.Atoi(os.Args[1]); err == nil && k > 0 {
			n = k * 10000000
		}
	}
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := work(n)
			mu.Lock()
			sink += v
			mu.Unlock()
		}()
	}
	wg.Wait()
	fmt.Println(sink != 1)
	os.Exit(4)
}
