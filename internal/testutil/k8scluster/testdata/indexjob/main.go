// Command indexjob is the image of the test cluster's Indexed Job test:
// it prints its completion index and host name, then exits 0.
package main

import (
	"fmt"
	"os"
)

func main() {
	host, _ := os.Hostname()
	fmt.Printf("indexjob: index %s on %s\n", os.Getenv("JOB_COMPLETION_INDEX"), host)
}
