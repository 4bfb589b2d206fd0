package remotewrite

import (
	"strconv"

	"github.com/prometheus/prometheus/prompb"
)

// kind is how a series' value moves from one scrape to the next.
type kind uint8

const (
	counter   kind = iota // grows by about mag per scrape
	gauge                 // wanders around mag
	fixed                 // the same value at every scrape, about mag (sizes, limits)
	info                  // exactly mag, usually 1 (…_info series)
	histogram             // a family only: expands to bucket, hsum and hcount series
	bucket                // histogram bucket: floor(count × frac), cumulative over le
	hsum                  // histogram sum: count × frac (frac holds the mean)
	hcount                // histogram count: grows by about mag observations per scrape
	nhist                 // native histogram: mag observations per scrape in exponential buckets
)

// dim is one label dimension of a family: the values it takes, each value
// setting one or more labels (a filesystem sets device, fstype and
// mountpoint together).
type dim [][]prompb.Label

// family is one metric family of a target, expanded over the cartesian
// product of its dims.
type family struct {
	name    string
	kind    kind
	mag     float64
	integer bool      // values are whole numbers (bytes, packets, counts)
	dims    []dim     // nil: one series
	buckets []float64 // histograms: upper bounds, +Inf added
	median  float64   // histograms: where half the observations fall
}

// layout is the hardware a node_exporter-like target reports on; the
// number of series per target follows from it.
type layout struct {
	cpus, disks, filesystems, netdevs int
}

func values(name string, vs ...string) dim {
	d := make(dim, len(vs))
	for i, v := range vs {
		d[i] = []prompb.Label{{Name: name, Value: v}}
	}
	return d
}

func numbered(name string, n int) dim {
	d := make(dim, n)
	for i := range d {
		d[i] = []prompb.Label{{Name: name, Value: strconv.Itoa(i)}}
	}
	return d
}

// diskName is sda, sdb, … sdz, sdaa, sdab, …
func diskName(i int) string {
	suffix := ""
	for i++; i > 0; i = (i - 1) / 26 {
		suffix = string(rune('a'+(i-1)%26)) + suffix
	}
	return "sd" + suffix
}

func disks(n int) dim {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = diskName(i)
	}
	return values("device", vs...)
}

func netdevs(n int) dim {
	vs := make([]string, n)
	vs[0] = "lo"
	for i := 1; i < n; i++ {
		vs[i] = "eth" + strconv.Itoa(i-1)
	}
	return values("device", vs...)
}

// filesystems are the usual few, then data volumes.
func filesystems(n int) dim {
	usual := [][3]string{
		{"/dev/sda1", "ext4", "/"},
		{"/dev/sda15", "vfat", "/boot/efi"},
		{"tmpfs", "tmpfs", "/run"},
		{"tmpfs", "tmpfs", "/run/lock"},
		{"/dev/sdb1", "xfs", "/var/lib/data"},
	}
	d := make(dim, n)
	for i := range d {
		fs := [3]string{"/dev/" + diskName(i) + "2", "xfs", "/mnt/data" + strconv.Itoa(i)}
		if i < len(usual) {
			fs = usual[i]
		}
		d[i] = []prompb.Label{{Name: "device", Value: fs[0]}, {Name: "fstype", Value: fs[1]}, {Name: "mountpoint", Value: fs[2]}}
	}
	return d
}

// families is what a target exposes on a machine of layout l: roughly what
// node_exporter 1.6 with its default collectors shows on a Linux server,
// plus two latency histograms (node_exporter itself exports none; these are
// of the kind an exporter next to it would).
func families(l layout) []family {
	cpu, disk, fs, net := numbered("cpu", l.cpus), disks(l.disks), filesystems(l.filesystems), netdevs(l.netdevs)
	fams := fixedFamilies()
	fams = append(fams, cpuFamilies(cpu)...)
	fams = append(fams, diskFamilies(disk)...)
	fams = append(fams, fsFamilies(fs)...)
	fams = append(fams, netFamilies(net)...)
	return fams
}

func cpuFamilies(cpu dim) []family {
	modes := values("mode", "idle", "iowait", "irq", "nice", "softirq", "steal", "system", "user")
	return []family{
		{name: "node_cpu_seconds_total", kind: counter, mag: 2, dims: []dim{cpu, modes}},
		{name: "node_cpu_guest_seconds_total", kind: counter, mag: 0.01, dims: []dim{cpu, values("mode", "nice", "user")}},
		{name: "node_schedstat_running_seconds_total", kind: counter, mag: 5, dims: []dim{cpu}},
		{name: "node_schedstat_timeslices_total", kind: counter, mag: 3000, integer: true, dims: []dim{cpu}},
		{name: "node_schedstat_waiting_seconds_total", kind: counter, mag: 0.5, dims: []dim{cpu}},
		{name: "node_softnet_processed_total", kind: counter, mag: 2000, integer: true, dims: []dim{cpu}},
		{name: "node_softnet_dropped_total", kind: counter, mag: 0.01, integer: true, dims: []dim{cpu}},
		{name: "node_softnet_times_squeezed_total", kind: counter, mag: 0.1, integer: true, dims: []dim{cpu}},
		{name: "node_cpu_scaling_frequency_hertz", kind: gauge, mag: 2.4e9, integer: true, dims: []dim{cpu}},
		{name: "node_cpu_scaling_frequency_max_hertz", kind: fixed, mag: 3.5e9, integer: true, dims: []dim{cpu}},
		{name: "node_cpu_scaling_frequency_min_hertz", kind: fixed, mag: 8e8, integer: true, dims: []dim{cpu}},
	}
}

func diskFamilies(disk dim) []family {
	counters := []struct {
		name string
		mag  float64
	}{
		{"reads_completed_total", 200}, {"reads_merged_total", 20}, {"read_bytes_total", 4e6},
		{"read_time_seconds_total", 0.5}, {"writes_completed_total", 400}, {"writes_merged_total", 100},
		{"written_bytes_total", 8e6}, {"write_time_seconds_total", 1}, {"io_time_seconds_total", 1},
		{"io_time_weighted_seconds_total", 1.5}, {"discards_completed_total", 2}, {"discards_merged_total", 0.1},
		{"discarded_sectors_total", 500}, {"discard_time_seconds_total", 0.01}, {"flush_requests_total", 10},
		{"flush_requests_time_seconds_total", 0.05},
	}
	var fams []family
	for _, c := range counters {
		fams = append(fams, family{name: "node_disk_" + c.name, kind: counter, mag: c.mag, dims: []dim{disk}})
	}
	return append(fams,
		family{name: "node_disk_io_now", kind: gauge, mag: 2, integer: true, dims: []dim{disk}},
		family{name: "node_disk_info", kind: info, mag: 1, dims: []dim{disk, values("major", "8")}},
		family{name: "ebpf_exporter_bio_latency_seconds", kind: histogram, mag: 300, median: 0.002,
			buckets: []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1},
			dims:    []dim{disk, values("operation", "read", "write")}},
	)
}

func fsFamilies(fs dim) []family {
	return []family{
		{name: "node_filesystem_avail_bytes", kind: gauge, mag: 5e10, integer: true, dims: []dim{fs}},
		{name: "node_filesystem_free_bytes", kind: gauge, mag: 6e10, integer: true, dims: []dim{fs}},
		{name: "node_filesystem_size_bytes", kind: fixed, mag: 1e11, integer: true, dims: []dim{fs}},
		{name: "node_filesystem_files", kind: fixed, mag: 6e6, integer: true, dims: []dim{fs}},
		{name: "node_filesystem_files_free", kind: gauge, mag: 5e6, integer: true, dims: []dim{fs}},
		{name: "node_filesystem_readonly", kind: info, mag: 0, dims: []dim{fs}},
		{name: "node_filesystem_device_error", kind: info, mag: 0, dims: []dim{fs}},
	}
}

func netFamilies(net dim) []family {
	var fams []family
	for _, dir := range []string{"receive", "transmit"} {
		for _, c := range []struct {
			name string
			mag  float64
		}{{"bytes", 5e6}, {"packets", 5000}, {"errs", 0.01}, {"drop", 0.1}, {"fifo", 0}, {"compressed", 0}} {
			fams = append(fams, family{name: "node_network_" + dir + "_" + c.name + "_total", kind: counter,
				mag: c.mag, integer: true, dims: []dim{net}})
		}
	}
	for _, name := range []string{"receive_frame", "receive_multicast", "transmit_colls", "transmit_carrier",
		"carrier_changes", "carrier_up_changes", "carrier_down_changes"} {
		fams = append(fams, family{name: "node_network_" + name + "_total", kind: counter, mag: 0.01, integer: true, dims: []dim{net}})
	}
	for _, g := range []struct {
		name string
		kind kind
		mag  float64
	}{
		{"up", info, 1}, {"carrier", info, 1}, {"mtu_bytes", fixed, 1500}, {"speed_bytes", fixed, 1.25e9},
		{"flags", fixed, 4099}, {"iface_id", fixed, 2}, {"iface_link", fixed, 2}, {"iface_link_mode", info, 0},
		{"transmit_queue_length", fixed, 1000}, {"address_assign_type", info, 0}, {"dormant", info, 0},
		{"protocol_type", fixed, 1}, {"net_dev_group", info, 0}, {"info", info, 1},
	} {
		fams = append(fams, family{name: "node_network_" + g.name, kind: g.kind, mag: g.mag, integer: true, dims: []dim{net}})
	}
	return append(fams, family{name: "node_arp_entries", kind: gauge, mag: 10, integer: true, dims: []dim{net}})
}
