//go:build !linux

package fleet

import "syscall"

// workerProcAttr is none outside Linux, where perflab does not run (cli):
// no death signal, and no process group on every system.
func workerProcAttr() *syscall.SysProcAttr { return nil }

// signalName is sig's description.
func signalName(sig syscall.Signal) string { return sig.String() }
