package cli

// linuxOnly says why perflab does not run on the system goos (a GOOS),
// "" on Linux. Elsewhere its packages build, with stand-ins for the calls
// only Linux has, but perflab would measure nothing right: Main refuses
// to start.
func linuxOnly(goos string) string {
	if goos == "linux" {
		return ""
	}
	return "perflab runs on Linux only: it reads /proc, cgroups and uses epoll; this is " + goos
}
