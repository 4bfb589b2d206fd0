package fleet

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// workerProcAttr puts a local worker in its own process group: an
// interrupt at the terminal reaches the coordinator alone, which stops
// the workers through the store. And it dies with the coordinator.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// signalName is sig's name: "SIGKILL".
func signalName(sig syscall.Signal) string { return unix.SignalName(sig) }
