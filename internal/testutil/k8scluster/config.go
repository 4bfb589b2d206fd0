//go:build linux

package k8scluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// PauseImage is the sandbox image of the node's pods: the pause program
// of this package, built and imported at Start.
const PauseImage = "perflab.local/k8scluster-pause:1"

// ServiceCIDR is the cluster's service IP range: on loopback, so that a
// pod that dials a service IP (no kube-proxy here) reaches nothing off
// this machine.
const ServiceCIDR = "127.80.0.0/24"

// ports are the loopback ports of one cluster, free when it started.
type ports struct {
	etcd, etcdPeer, apiserver, kubelet, kubeletHealthz int
}

// layout is where one cluster keeps its files, all under dir.
type layout struct {
	dir, pki, logs, etcd, containerd, kubelet, cni string
}

func newLayout(dir string) layout {
	return layout{
		dir:        dir,
		pki:        filepath.Join(dir, "pki"),
		logs:       filepath.Join(dir, "logs"),
		etcd:       filepath.Join(dir, "etcd"),
		containerd: filepath.Join(dir, "containerd"),
		kubelet:    filepath.Join(dir, "kubelet"),
		cni:        filepath.Join(dir, "cni"),
	}
}

func (l layout) mkdirs() error {
	for _, d := range []string{l.pki, l.logs, l.containerd, l.kubelet, l.cni} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cannot create %s: %w", d, err)
		}
	}
	return nil
}

func (l layout) containerdSocket() string { return filepath.Join(l.containerd, "containerd.sock") }

// containerdConfig is containerd's configuration: its root, state, socket
// and runc state in the cluster's directory; the CRI plugin with
// restrict_oom_score_adj (without it runc cannot set oom_score_adj where
// root lacks CAP_SYS_RESOURCE, and no container starts), the local pause
// image, the loopback-only CNI config, no AppArmor profile loaded into the
// kernel, network namespaces under the state directory.
func (l layout) containerdConfig() string {
	c := l.containerd
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  restrict_oom_score_adj = true
  disable_apparmor = true
  netns_mounts_under_state_dir = true
  enable_selinux = false

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  Root = %[7]q
  SystemdCgroup = false

[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = %[8]q
  conf_dir = %[9]q
`, filepath.Join(c, "root"), filepath.Join(c, "state"), l.containerdSocket(), l.containerdSocket()+".ttrpc",
		filepath.Join(c, "opt"), PauseImage, filepath.Join(c, "runc"), cniBinDir, l.cni)
}

// cniBinDir is where Debian's containernetworking-plugins installs.
const cniBinDir = "/usr/lib/cni"

// cniConfig is a loopback-only network: without any CNI config the node
// stays NotReady ("cni plugin not initialized"); this one touches nothing
// on the host, and pods that need the network use hostNetwork.
const cniConfig = `{
  "cniVersion": "1.0.0",
  "name": "perflab-loopback",
  "plugins": [{"type": "loopback"}]
}
`

// kubeletConfig is the KubeletConfiguration: cgroupfs on cgroup v1
// (failCgroupV1: false, else v1.34 refuses it), no swap check, serving
// on 127.0.0.1 only, no iptables chains, image GC that never runs (an
// imported image, once collected, cannot be pulled again) and eviction
// thresholds low enough that a full CI disk does not taint the node.
func (l layout) kubeletConfig(p ports, ca, serving *keyPair) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: %d
healthzBindAddress: 127.0.0.1
healthzPort: %d
readOnlyPort: 0
tlsCertFile: %q
tlsPrivateKeyFile: %q
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %q}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
makeIPTablesUtilChains: false
containerRuntimeEndpoint: %q
podLogsDir: %q
volumePluginDir: %q
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
  imagefs.inodesFree: 1%%
serializeImagePulls: false
resolvConf: /etc/resolv.conf
`, p.kubelet, p.kubeletHealthz, serving.certFile, serving.keyFile, ca.certFile,
		"unix://"+l.containerdSocket(), filepath.Join(l.kubelet, "pod-logs"), filepath.Join(l.kubelet, "volume-plugins"))
}

// etcdArgs: one member, plain HTTP, on loopback ports.
func (l layout) etcdArgs(p ports) []string {
	client := "http://127.0.0.1:" + strconv.Itoa(p.etcd)
	peer := "http://127.0.0.1:" + strconv.Itoa(p.etcdPeer)
	return []string{
		"--name=perflab", "--data-dir=" + l.etcd,
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=perflab=" + peer, "--initial-cluster-state=new",
		"--log-level=warn",
	}
}

// apiserverArgs: Node and RBAC authorization; no endpoint reconciler (a
// single API server on loopback); the kubelet reached by its hostname,
// which resolves to 127.0.0.1, so that logs and exec work.
func (l layout) apiserverArgs(p ports, certs map[string]*keyPair, saKey, saPub string) []string {
	return []string{
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(p.etcd),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(p.apiserver),
		"--tls-cert-file=" + certs["apiserver"].certFile, "--tls-private-key-file=" + certs["apiserver"].keyFile,
		"--client-ca-file=" + certs["ca"].certFile,
		"--kubelet-client-certificate=" + certs["apiserver-kubelet"].certFile,
		"--kubelet-client-key=" + certs["apiserver-kubelet"].keyFile,
		"--kubelet-preferred-address-types=Hostname",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saPub, "--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--authorization-mode=Node,RBAC", "--endpoint-reconciler-type=none",
		"--allow-privileged=true", "--profiling=false",
	}
}

// controllerManagerArgs: a service account per controller (pods with a
// token need the root CA), no leader election, no serving port.
func (l layout) controllerManagerArgs(certs map[string]*keyPair, saKey string) []string {
	return []string{
		"--kubeconfig=" + filepath.Join(l.pki, "controller-manager.kubeconfig"),
		"--use-service-account-credentials", "--root-ca-file=" + certs["ca"].certFile,
		"--service-account-private-key-file=" + saKey,
		"--leader-elect=false", "--secure-port=0", "--bind-address=127.0.0.1",
		"--service-cluster-ip-range=" + ServiceCIDR, "--profiling=false",
	}
}

func (l layout) schedulerArgs() []string {
	return []string{
		"--kubeconfig=" + filepath.Join(l.pki, "scheduler.kubeconfig"),
		"--leader-elect=false", "--secure-port=0", "--bind-address=127.0.0.1", "--profiling=false",
	}
}

// kubeletArgs: no --node-ip (the kubelet refuses a loopback one and then
// reports no address at all): it takes the host's address as InternalIP,
// while it serves on 127.0.0.1 and the API server reaches it by the host
// name. --containerd is cAdvisor's own flag (not in the configuration
// file): without it the kubelet's cAdvisor looks for containerd at
// /run/containerd/containerd.sock, finds none, and /metrics/cadvisor has
// only the pods' cgroups, no container's series. --housekeeping-interval
// (cAdvisor's too) is 1 s, not 10: a test that reads a container's
// counters after its load (perflab size --verify --k8s waits for a sample
// taken after the run's end) waits a second for one, not ten.
func (l layout) kubeletArgs(node string) []string {
	return []string{
		"--config=" + filepath.Join(l.kubelet, "config.yaml"),
		"--kubeconfig=" + filepath.Join(l.pki, "kubelet.kubeconfig"),
		"--root-dir=" + filepath.Join(l.kubelet, "root"),
		"--hostname-override=" + node,
		"--containerd=" + l.containerdSocket(),
		"--housekeeping-interval=1s",
	}
}

func (l layout) containerdArgs() []string {
	return []string{"--config=" + filepath.Join(l.containerd, "config.toml")}
}
