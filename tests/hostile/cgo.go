// SPDX-License-Identifier: MIT
// cgo.go - Go built with cgo (dynamically linked): goroutines busy for 3
// seconds of wall time, calling into C between slices of Go computation.
package main

/*
static unsigned long c_hot(unsigned long n)
{
	volatile unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 2862933555777941757UL + i;
	return x;
}
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"time"
)

//go:noinline
func goHot(n int) uint64 {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + uint64(i) ^ (x >> 17)
	}
	return x
}

func main() {
	end := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	var mu sync.Mutex
	chunks := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([][]byte, 0)
			for time.Now().Before(end) {
				goHot(200000)
				C.c_hot(20000)
				buf = append(buf, make([]byte, 4096))
				if len(buf) > 256 {
					buf = buf[:0]
				}
				mu.Lock()
				chunks++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	fmt.Println("goroutines done:", chunks > 0)
	os.Exit(0)
}
