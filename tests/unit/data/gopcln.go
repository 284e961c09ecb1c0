// The Go program tests/unit/test_gopclntab.c reads and runs: small functions
// the compiler inlines (three levels deep), goroutines parked in the runtime,
// and a panic (argument "panic") or a nil dereference ("nil") whose traceback,
// printed with GOTRACEBACK=system, gives every frame's fp and sp.
package main

import (
	"fmt"
	"os"
	"sync"
)

type node struct {
	next *node
	val  int
}

var sink int

func leaf(n *node) int {
	return n.val * 3
}

func middle(n *node) int {
	return leaf(n) + 1
}

func top(n *node) int {
	return middle(n) + 2
}

func boom(depth int) {
	if depth > 3 {
		panic(fmt.Sprintf("boom at %d", depth))
	}
	sink += depth
}

func check(depth int) {
	boom(depth)
}

//go:noinline
func recurse(depth int, n *node) int {
	if depth == 0 {
		if n != nil {
			check(7)
		}
		return top(n)
	}
	return recurse(depth-1, n) + top(n)
}

//go:noinline
func waiter(ch chan int, wg *sync.WaitGroup) {
	wg.Done()
	sink += <-ch
}

func main() {
	ch := make(chan int)
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go waiter(ch, &wg)
	}
	wg.Wait()
	var n *node
	if len(os.Args) > 1 && os.Args[1] == "panic" {
		n = &node{val: 4}
	} else if len(os.Args) > 1 && os.Args[1] == "nil" {
		n = nil
	}
	if len(os.Args) > 1 {
		sink = recurse(3, n)
	}
	fmt.Println(top(&node{val: sink}))
}
