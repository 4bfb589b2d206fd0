package remotewrite

// scalar is a family of one series.
type scalar struct {
	name    string
	kind    kind
	mag     float64
	integer bool
}

// fixedFamilies are the families whose size does not depend on the
// hardware: the exporter's Go runtime and process, memory, load, kernel
// and network stack counters, and the per-collector scrape metrics.
func fixedFamilies() []family {
	var fams []family
	for _, group := range [][]scalar{goScalars(), nodeScalars(), netstatScalars()} {
		for _, s := range group {
			fams = append(fams, family{name: s.name, kind: s.kind, mag: s.mag, integer: s.integer})
		}
	}
	for _, m := range memoryFields() {
		k := gauge
		if m.fixed {
			k = fixed
		}
		fams = append(fams, family{name: "node_memory_" + m.name + "_bytes", kind: k, mag: m.mag, integer: true})
	}
	collectors := values("collector", "arp", "bcache", "bonding", "btrfs", "conntrack", "cpu", "cpufreq",
		"diskstats", "dmi", "edac", "entropy", "fibrechannel", "filefd", "filesystem", "hwmon", "infiniband",
		"ipvs", "loadavg", "mdadm", "meminfo", "netclass", "netdev", "netstat", "nfs", "nfsd", "nvme", "os",
		"powersupplyclass", "pressure", "rapl", "schedstat", "selinux", "sockstat", "softnet", "stat",
		"tapestats", "textfile", "thermal_zone", "time", "timex", "udp_queues", "uname", "vmstat", "xfs", "zfs")
	return append(fams,
		family{name: "go_gc_duration_seconds", kind: gauge, mag: 0.0002,
			dims: []dim{values("quantile", "0", "0.25", "0.5", "0.75", "1")}},
		family{name: "go_info", kind: info, mag: 1, dims: []dim{values("version", "go1.21.4")}},
		family{name: "promhttp_metric_handler_requests_total", kind: counter, mag: 1, integer: true,
			dims: []dim{values("code", "200", "500", "503")}},
		family{name: "node_scrape_collector_duration_seconds", kind: gauge, mag: 0.002, dims: []dim{collectors}},
		family{name: "node_scrape_collector_success", kind: info, mag: 1, dims: []dim{collectors}},
		family{name: "node_uname_info", kind: info, mag: 1, dims: []dim{{{
			{Name: "domainname", Value: "(none)"}, {Name: "machine", Value: "x86_64"},
			{Name: "release", Value: "6.1.0-13-amd64"}, {Name: "sysname", Value: "Linux"},
			{Name: "version", Value: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1 (2023-09-29)"},
		}}}},
		family{name: "node_os_info", kind: info, mag: 1, dims: []dim{{{
			{Name: "id", Value: "debian"}, {Name: "name", Value: "Debian GNU/Linux"},
			{Name: "pretty_name", Value: "Debian GNU/Linux 12 (bookworm)"}, {Name: "version_id", Value: "12"},
		}}}},
		family{name: "node_exporter_build_info", kind: info, mag: 1, dims: []dim{{{
			{Name: "goversion", Value: "go1.21.4"}, {Name: "version", Value: "1.6.1"},
		}}}},
		family{name: "node_exporter_scrape_duration_seconds", kind: histogram, mag: 4, median: 0.02,
			buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}},
	)
}

func goScalars() []scalar {
	return []scalar{
		{"go_gc_duration_seconds_sum", counter, 0.01, false}, {"go_gc_duration_seconds_count", counter, 5, true},
		{"go_goroutines", gauge, 8, true}, {"go_threads", gauge, 10, true},
		{"go_memstats_alloc_bytes", gauge, 3e6, true}, {"go_memstats_alloc_bytes_total", counter, 3e7, true},
		{"go_memstats_buck_hash_sys_bytes", fixed, 1.5e6, true}, {"go_memstats_frees_total", counter, 3e5, true},
		{"go_memstats_gc_sys_bytes", fixed, 8e6, true}, {"go_memstats_heap_alloc_bytes", gauge, 3e6, true},
		{"go_memstats_heap_idle_bytes", gauge, 4e6, true}, {"go_memstats_heap_inuse_bytes", gauge, 5e6, true},
		{"go_memstats_heap_objects", gauge, 2e4, true}, {"go_memstats_heap_released_bytes", gauge, 3e6, true},
		{"go_memstats_heap_sys_bytes", fixed, 1.2e7, true}, {"go_memstats_last_gc_time_seconds", counter, 3, false},
		{"go_memstats_lookups_total", counter, 0, true}, {"go_memstats_mallocs_total", counter, 3e5, true},
		{"go_memstats_mcache_inuse_bytes", fixed, 4800, true}, {"go_memstats_mcache_sys_bytes", fixed, 15600, true},
		{"go_memstats_mspan_inuse_bytes", gauge, 1.5e5, true}, {"go_memstats_mspan_sys_bytes", fixed, 2.1e5, true},
		{"go_memstats_next_gc_bytes", gauge, 6e6, true}, {"go_memstats_other_sys_bytes", fixed, 1e6, true},
		{"go_memstats_stack_inuse_bytes", gauge, 8e5, true}, {"go_memstats_stack_sys_bytes", fixed, 8e5, true},
		{"go_memstats_sys_bytes", fixed, 2.5e7, true},
		{"process_cpu_seconds_total", counter, 0.2, false}, {"process_max_fds", fixed, 1048576, true},
		{"process_open_fds", gauge, 10, true}, {"process_resident_memory_bytes", gauge, 2.4e7, true},
		{"process_start_time_seconds", fixed, 1.7e9, true}, {"process_virtual_memory_bytes", gauge, 7.4e8, true},
		{"process_virtual_memory_max_bytes", info, 1.8446744073709552e19, false},
		{"promhttp_metric_handler_requests_in_flight", info, 1, true},
	}
}

func nodeScalars() []scalar {
	return []scalar{
		{"node_load1", gauge, 1.5, false}, {"node_load5", gauge, 1.4, false}, {"node_load15", gauge, 1.3, false},
		{"node_boot_time_seconds", fixed, 1.7e9, true}, {"node_time_seconds", counter, 15, false},
		{"node_context_switches_total", counter, 6e4, true}, {"node_intr_total", counter, 4e4, true},
		{"node_forks_total", counter, 50, true}, {"node_procs_running", gauge, 3, true},
		{"node_procs_blocked", gauge, 0.3, true}, {"node_entropy_available_bits", gauge, 256, true},
		{"node_entropy_pool_size_bits", fixed, 256, true},
		{"node_filefd_allocated", gauge, 2000, true}, {"node_filefd_maximum", fixed, 9.2e18, true},
		{"node_vmstat_pgfault", counter, 2e5, true}, {"node_vmstat_pgmajfault", counter, 2, true},
		{"node_vmstat_pgpgin", counter, 4000, true}, {"node_vmstat_pgpgout", counter, 8000, true},
		{"node_vmstat_pswpin", counter, 0, true}, {"node_vmstat_pswpout", counter, 0, true},
		{"node_vmstat_oom_kill", counter, 0, true},
		{"node_nf_conntrack_entries", gauge, 300, true}, {"node_nf_conntrack_entries_limit", fixed, 262144, true},
		{"node_pressure_cpu_waiting_seconds_total", counter, 0.3, false},
		{"node_pressure_io_stalled_seconds_total", counter, 0.1, false},
		{"node_pressure_io_waiting_seconds_total", counter, 0.15, false},
		{"node_pressure_memory_stalled_seconds_total", counter, 0.001, false},
		{"node_pressure_memory_waiting_seconds_total", counter, 0.002, false},
		{"node_textfile_scrape_error", info, 0, true},
		{"node_timex_estimated_error_seconds", gauge, 0.0001, false},
		{"node_timex_frequency_adjustment_ratio", gauge, 1, false},
		{"node_timex_loop_time_constant", fixed, 7, true}, {"node_timex_maxerror_seconds", gauge, 0.2, false},
		{"node_timex_offset_seconds", gauge, 0.00001, false}, {"node_timex_pps_calibration_total", info, 0, true},
		{"node_timex_pps_error_total", info, 0, true}, {"node_timex_pps_frequency_hertz", info, 0, true},
		{"node_timex_pps_jitter_seconds", info, 0, true}, {"node_timex_pps_jitter_total", info, 0, true},
		{"node_timex_pps_shift_seconds", info, 0, true}, {"node_timex_pps_stability_exceeded_total", info, 0, true},
		{"node_timex_pps_stability_hertz", info, 0, true}, {"node_timex_status", fixed, 8193, true},
		{"node_timex_sync_status", info, 1, true}, {"node_timex_tai_offset_seconds", info, 0, true},
		{"node_timex_tick_seconds", fixed, 0.01, false},
	}
}

func netstatScalars() []scalar {
	var s []scalar
	for _, c := range []struct {
		name string
		kind kind
		mag  float64
	}{
		{"Icmp_InErrors", counter, 0.1}, {"Icmp_InMsgs", counter, 5}, {"Icmp_OutMsgs", counter, 5},
		{"Ip_Forwarding", fixed, 1}, {"IpExt_InOctets", counter, 1e7}, {"IpExt_OutOctets", counter, 1e7},
		{"Tcp_ActiveOpens", counter, 30}, {"Tcp_CurrEstab", gauge, 40}, {"Tcp_InErrs", counter, 0.01},
		{"Tcp_InSegs", counter, 8000}, {"Tcp_OutRsts", counter, 5}, {"Tcp_OutSegs", counter, 8000},
		{"Tcp_PassiveOpens", counter, 20}, {"Tcp_RetransSegs", counter, 3},
		{"TcpExt_ListenDrops", counter, 0}, {"TcpExt_ListenOverflows", counter, 0},
		{"TcpExt_SyncookiesFailed", counter, 0}, {"TcpExt_SyncookiesRecv", counter, 0},
		{"TcpExt_SyncookiesSent", counter, 0}, {"TcpExt_TCPSynRetrans", counter, 0.5},
		{"TcpExt_TCPTimeouts", counter, 1}, {"Udp_InDatagrams", counter, 100}, {"Udp_InErrors", counter, 0},
		{"Udp_NoPorts", counter, 1}, {"Udp_OutDatagrams", counter, 100}, {"Udp_RcvbufErrors", counter, 0},
		{"Udp_SndbufErrors", counter, 0}, {"UdpLite_InErrors", counter, 0},
	} {
		s = append(s, scalar{"node_netstat_" + c.name, c.kind, c.mag, true})
	}
	for _, g := range []struct {
		name string
		mag  float64
	}{
		{"sockets_used", 400}, {"FRAG_inuse", 0}, {"FRAG_memory", 0}, {"RAW_inuse", 0}, {"TCP_alloc", 50},
		{"TCP_inuse", 40}, {"TCP_mem", 10}, {"TCP_mem_bytes", 40960}, {"TCP_orphan", 0}, {"TCP_tw", 20},
		{"UDP_inuse", 5}, {"UDP_mem", 2}, {"UDP_mem_bytes", 8192}, {"UDPLITE_inuse", 0},
		{"TCP6_inuse", 10}, {"UDP6_inuse", 2}, {"RAW6_inuse", 1}, {"FRAG6_inuse", 0}, {"FRAG6_memory", 0},
	} {
		s = append(s, scalar{"node_sockstat_" + g.name, gauge, g.mag, true})
	}
	return s
}

// memField is a /proc/meminfo field, node_memory_<name>_bytes.
type memField struct {
	name  string
	mag   float64
	fixed bool
}

func memoryFields() []memField {
	return []memField{
		{"MemTotal", 1.6e10, true}, {"MemFree", 2e9, false}, {"MemAvailable", 9e9, false},
		{"Buffers", 3e8, false}, {"Cached", 6e9, false}, {"SwapCached", 0, false},
		{"Active", 5e9, false}, {"Inactive", 5e9, false}, {"Active_anon", 3e9, false},
		{"Inactive_anon", 1e8, false}, {"Active_file", 2e9, false}, {"Inactive_file", 5e9, false},
		{"Unevictable", 0, true}, {"Mlocked", 0, true}, {"SwapTotal", 0, true}, {"SwapFree", 0, true},
		{"Zswap", 0, true}, {"Zswapped", 0, true},
		{"Dirty", 1e6, false}, {"Writeback", 0, false}, {"AnonPages", 3e9, false}, {"Mapped", 5e8, false},
		{"Shmem", 2e8, false}, {"KReclaimable", 4e8, false}, {"Slab", 6e8, false}, {"SReclaimable", 4e8, false},
		{"SUnreclaim", 2e8, false}, {"KernelStack", 1.5e7, false}, {"PageTables", 4e7, false},
		{"SecPageTables", 0, true}, {"NFS_Unstable", 0, true}, {"Bounce", 0, true}, {"WritebackTmp", 0, true},
		{"CommitLimit", 8e9, true}, {"Committed_AS", 7e9, false}, {"VmallocTotal", 3.5e13, true},
		{"VmallocUsed", 6e7, false}, {"VmallocChunk", 0, true}, {"Percpu", 1e7, true},
		{"HardwareCorrupted", 0, true}, {"AnonHugePages", 1e8, false}, {"ShmemHugePages", 0, true},
		{"ShmemPmdMapped", 0, true}, {"FileHugePages", 0, true}, {"FilePmdMapped", 0, true},
		{"HugePages_Total", 0, true}, {"HugePages_Free", 0, true}, {"HugePages_Rsvd", 0, true},
		{"HugePages_Surp", 0, true}, {"Hugepagesize", 2097152, true}, {"Hugetlb", 0, true},
		{"DirectMap4k", 3e8, true}, {"DirectMap2M", 8e9, true}, {"DirectMap1G", 1e10, true},
	}
}
