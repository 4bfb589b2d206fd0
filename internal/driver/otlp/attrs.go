package otlpdriver

// attrList appends attributes until it holds want.
type attrList struct {
	out  []attr
	want int
}

func (l *attrList) str(key, v string) {
	if len(l.out) < l.want {
		l.out = append(l.out, attr{key: key, str: v})
	}
}

func (l *attrList) int(key string, v int64) {
	if len(l.out) < l.want {
		l.out = append(l.out, attr{key: key, num: v, isInt: true})
	}
}

// standard names sp and appends up to want standard attributes of its
// category to out, most telling first (http.route before
// user_agent.original).
func (g *generator) standard(sp *span, s *service, cat category, failed bool, out []attr, want int) []attr {
	l := attrList{out: out, want: want}
	v := g.voc
	switch cat {
	case catHTTPServer:
		op := g.pick(s.ops)
		sp.name = s.ops[op]
		code := int64(200)
		if failed {
			code = 500
		}
		l.str("http.request.method", s.verbs[op])
		l.str("http.route", s.methods[op])
		l.int("http.response.status_code", code)
		l.str("url.path", s.methods[op])
		l.str("url.scheme", "https")
		l.str("server.address", s.host)
		l.str("user_agent.original", v.agents[g.pick(v.agents)])
		l.str("client.address", v.clients[g.pick(v.clients)])
		l.str("network.protocol.version", "1.1")
	case catRPCServer:
		op := g.pick(s.ops)
		sp.name = s.ops[op]
		code := int64(0)
		if failed {
			code = 13 // INTERNAL
		}
		l.str("rpc.system", "grpc")
		l.str("rpc.service", s.rpc)
		l.str("rpc.method", s.methods[op])
		l.int("rpc.grpc.status_code", code)
		l.str("server.address", s.host)
		l.int("server.port", v.serverPorts[g.rng.IntN(len(v.serverPorts))])
		l.str("network.peer.address", v.clients[g.pick(v.clients)])
		l.str("network.transport", "tcp")
	case catDB:
		g.db(sp, &l)
	case catCache:
		op := g.pick(v.cacheOps)
		sp.name = v.cacheNames[op]
		l.str("db.system", "redis")
		l.str("db.operation.name", v.cacheOps[op])
		l.str("db.query.text", v.cacheQuery[op])
		l.str("server.address", "redis.shop.svc.cluster.local")
		l.int("server.port", 6379)
		l.str("db.namespace", "0")
	case catProducer, catConsumer:
		g.messaging(sp, cat, &l)
	default:
		sp.name = s.internal[g.pick(s.internal)]
		l.str("code.function.name", sp.name)
		l.str("code.file.path", "/app/main.go")
		l.int("code.line.number", int64(40+g.rng.IntN(400)))
		l.int("thread.id", int64(1+g.rng.IntN(64)))
	}
	return l.out
}

func (g *generator) db(sp *span, l *attrList) {
	v := g.voc
	op, table := g.pick(v.dbOps), g.pick(v.dbTables)
	i := op*len(v.dbTables) + table
	si := g.pick(v.dbSystems)
	sys := v.dbSystems[si]
	sp.name = v.dbNames[i]
	l.str("db.system", sys)
	l.str("db.namespace", "shop")
	l.str("db.operation.name", v.dbOps[op])
	l.str("db.collection.name", v.dbTables[table])
	l.str("db.query.text", v.dbQueries[i])
	l.str("server.address", v.dbHosts[si])
	l.int("server.port", v.dbPorts[sys])
}

func (g *generator) messaging(sp *span, cat category, l *attrList) {
	v := g.voc
	t := g.pick(v.topics)
	op := "publish"
	sp.name = v.pubNames[t]
	if cat == catConsumer {
		op, sp.name = "process", v.procNames[t]
	}
	l.str("messaging.system", "kafka")
	l.str("messaging.destination.name", v.topics[t])
	l.str("messaging.operation.type", op)
	l.str("messaging.message.id", g.fill(16))
	l.str("server.address", "kafka.shop.svc.cluster.local")
	l.int("messaging.kafka.destination.partition", int64(g.rng.IntN(12)))
}
