// Command pause is the sandbox ("pause") image of the test cluster
// (internal/testutil/k8scluster): the process that holds a pod's
// namespaces. It waits for SIGTERM or SIGINT and exits 0. The helper
// builds it as a static binary and imports it into the node's containerd.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
