// Command memhog is an image of the kubernetes preset's real-cluster test:
// after -wait it writes -touch MiB of memory, a page at a time, so that
// they are resident (a container whose memory limit is lower is
// OOM-killed), then exits with -exit after -after, or with -exit 0 sleeps
// until killed.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

// held keeps what was written reachable: the GC cannot return it.
var held [][]byte

func main() {
	touch := flag.Int("touch", 0, "MiB to write")
	code := flag.Int("exit", 0, "exit code; 0 sleeps until killed")
	wait := flag.Duration("wait", 0, "how long before writing")
	after := flag.Duration("after", time.Second, "how long after writing before exiting")
	flag.Parse()
	time.Sleep(*wait)
	for range *touch {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		held = append(held, b)
	}
	fmt.Printf("memhog: %d MiB written\n", len(held))
	for *code == 0 {
		time.Sleep(time.Hour)
	}
	time.Sleep(*after)
	os.Exit(*code)
}
