package otlpdriver

import (
	"strconv"
	"strings"
)

// The vocabulary of generated spans: operation names per service, and the
// standard attribute keys (OpenTelemetry semantic conventions) of each kind
// of span. Every string here is built once per generator, so generating a
// span allocates nothing.

// category is what a span does; it decides its kind, name and standard
// attributes.
type category uint8

const (
	catHTTPServer category = iota // the entry point: an HTTP route
	catRPCServer                  // a gRPC method of a service
	catDB                         // a SQL query
	catCache                      // a Redis command
	catProducer                   // publishing a message
	catConsumer                   // processing a message
	catInternal                   // in-process work
	numCategories
)

// OTLP span kinds and status codes, as on the wire.
const (
	kindInternal = 1
	kindServer   = 2
	kindClient   = 3
	kindProducer = 4
	kindConsumer = 5

	statusError = 2
)

func (c category) kind() uint8 {
	switch c {
	case catHTTPServer, catRPCServer:
		return kindServer
	case catDB, catCache:
		return kindClient
	case catProducer:
		return kindProducer
	case catConsumer:
		return kindConsumer
	}
	return kindInternal
}

// service is one service of a shape, with everything precomputed.
type service struct {
	name     string
	host     string   // server.address of the service
	rpc      string   // gRPC service name, e.g. oteldemo.CartService
	ops      []string // server span names: HTTP routes or gRPC methods
	methods  []string // rpc.method per op (gRPC), or the route (HTTP)
	verbs    []string // http.request.method per op (HTTP)
	internal []string // internal span names
	resource []attr   // resource attributes
}

// knownOps are the gRPC methods of the services the named shapes use,
// after the OpenTelemetry demo shop.
func knownOps(name string) []string {
	switch name {
	case "cart":
		return []string{"GetCart", "AddItem", "EmptyCart"}
	case "checkout":
		return []string{"PlaceOrder"}
	case "payment":
		return []string{"Charge"}
	case "shipping":
		return []string{"GetQuote", "ShipOrder"}
	case "currency":
		return []string{"Convert", "GetSupportedCurrencies"}
	case "product-catalog":
		return []string{"ListProducts", "GetProduct", "SearchProducts"}
	case "recommendation":
		return []string{"ListRecommendations"}
	case "ad":
		return []string{"GetAds"}
	case "email":
		return []string{"SendOrderConfirmation"}
	case "quote":
		return []string{"GetQuote"}
	case "fraud-detection":
		return []string{"CheckOrder"}
	case "accounting":
		return []string{"RecordOrder"}
	case "inventory":
		return []string{"Reserve", "Release"}
	case "auth":
		return []string{"Authenticate", "Authorize"}
	}
	return []string{"Get", "List", "Update"}
}

// httpRoutes are the entry point's routes, "METHOD /route".
func httpRoutes() []string {
	return []string{
		"GET /", "GET /api/products", "GET /api/products/{id}", "GET /api/cart",
		"POST /api/cart", "POST /api/checkout", "GET /api/recommendations",
		"GET /api/currency", "GET /api/shipping",
	}
}

// newService precomputes the names of service i of names; the first
// service is the HTTP entry point.
func newService(names []string, i int) service {
	name := names[i]
	s := service{name: name, host: name + ".shop.svc.cluster.local"}
	if i == 0 {
		for _, r := range httpRoutes() {
			verb, route, _ := strings.Cut(r, " ")
			s.ops, s.verbs, s.methods = append(s.ops, r), append(s.verbs, verb), append(s.methods, route)
		}
	} else {
		s.rpc = "oteldemo." + camel(name) + "Service"
		for _, m := range knownOps(name) {
			s.ops, s.methods = append(s.ops, s.rpc+"/"+m), append(s.methods, m)
		}
	}
	for _, w := range []string{"validate", "serialize", "compute", "render", "load-config"} {
		s.internal = append(s.internal, name+"."+w)
	}
	return s
}

// camel turns "product-catalog" into "ProductCatalog".
func camel(name string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == '.' || r == ' ' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	if b.Len() == 0 {
		return "Unnamed"
	}
	return b.String()
}

// vocabulary holds the fixed values standard attributes draw from.
type vocabulary struct {
	dbSystems   []string
	dbHosts     []string // server.address per db system
	dbOps       []string // SELECT, INSERT, UPDATE
	dbTables    []string
	dbNames     []string // span names: "SELECT shop.orders", per op × table
	dbQueries   []string // db.query.text, per op × table
	cacheOps    []string
	cacheNames  []string // "redis GET", per cache op
	cacheQuery  []string // "GET cart:{id}", per cache op
	topics      []string
	pubNames    []string // "orders publish", per topic
	procNames   []string // "orders process", per topic
	agents      []string
	clients     []string // client.address values
	errors      []string // status messages of failed spans
	fillerKeys  []string // app.attr_0 …
	resFiller   []string // app.resource_0 …
	pids        []int64
	dbPorts     map[string]int64
	serverPorts []int64
}

func newVocabulary() *vocabulary {
	v := &vocabulary{
		dbSystems: []string{"postgresql", "mysql"},
		dbOps:     []string{"SELECT", "INSERT", "UPDATE"},
		dbTables:  []string{"orders", "products", "carts", "users", "payments"},
		cacheOps:  []string{"GET", "SET", "HGET", "EXPIRE"},
		topics:    []string{"orders", "payments", "shipments"},
		agents: []string{
			"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
			"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
			"python-requests/2.32.3", "Go-http-client/1.1",
		},
		clients:     []string{"10.0.3.17", "10.0.7.201", "10.0.12.4", "172.16.0.9"},
		errors:      []string{"connection reset by peer", "deadline exceeded", "internal error", "payment declined", "not found"},
		pids:        []int64{1, 7, 42, 1183},
		dbPorts:     map[string]int64{"postgresql": 5432, "mysql": 3306},
		serverPorts: []int64{8080, 9090, 50051},
	}
	for _, sys := range v.dbSystems {
		v.dbHosts = append(v.dbHosts, sys+".shop.svc.cluster.local")
	}
	for _, op := range v.dbOps {
		for _, t := range v.dbTables {
			v.dbNames = append(v.dbNames, op+" shop."+t)
			v.dbQueries = append(v.dbQueries, dbQuery(op, t))
		}
	}
	for _, op := range v.cacheOps {
		v.cacheNames = append(v.cacheNames, "redis "+op)
		v.cacheQuery = append(v.cacheQuery, op+" cart:{id}")
	}
	for _, t := range v.topics {
		v.pubNames, v.procNames = append(v.pubNames, t+" publish"), append(v.procNames, t+" process")
	}
	for i := range 128 {
		v.fillerKeys = append(v.fillerKeys, "app.attr_"+strconv.Itoa(i))
		v.resFiller = append(v.resFiller, "app.resource_"+strconv.Itoa(i))
	}
	return v
}

func dbQuery(op, table string) string {
	switch op {
	case "INSERT":
		return "INSERT INTO " + table + " (id, owner, total, created_at) VALUES ($1, $2, $3, now())"
	case "UPDATE":
		return "UPDATE " + table + " SET total = $2, updated_at = now() WHERE id = $1"
	}
	return "SELECT id, owner, total, created_at FROM " + table + " WHERE owner = $1 ORDER BY created_at DESC LIMIT 20"
}
