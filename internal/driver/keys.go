package driver

// ParamKeys names the params of a driver that say something other than
// what load it applies. Each is a top-level key of the params a plan gives
// a workload of the driver (a yaml tag of the struct they decode into).
type ParamKeys struct {
	// Place are the params that say where the system under test is or how
	// to reach it: URLs, endpoints, buckets, TLS trust, tenants,
	// credentials. Two systems compared on the same load differ in them,
	// so a comparison notes a difference in them but is not refused for
	// it.
	Place []string
	// Secret are the params whose values are credentials: masked in the
	// params stored with a run when written literally, and scrubbed from
	// everything a run stores or prints, literal or from ${VAR}.
	Secret []string
	// Headers are the params that are mappings of request headers: the
	// value of a header named like a credential (Authorization, X-Api-Key,
	// a token, a cookie …) is treated as a Secret.
	Headers []string
	// SecretEnv are environment variables the driver reads credentials
	// from when the params give none; their values are scrubbed too.
	SecretEnv []string
}

// Keyed is implemented by the struct a driver's params decode into (its
// Config): it declares which of its params are not the load. Every driver
// a plan can name has one.
type Keyed interface {
	ParamKeys() ParamKeys
}
