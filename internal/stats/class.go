package stats

import "fmt"

// Class is the outcome of one operation: OK or one of a closed set of failure
// classes. Drivers map every error they see to exactly one class.
type Class uint8

// The classes, in the order reports list them.
const (
	OK Class = iota
	Timeout
	DNS
	Connect
	TLS
	Status4xx
	RateLimited // HTTP 429: the system refused the request for its rate; not counted in Status4xx
	Status5xx
	// StatusOther is a final answer whose status the plan does not count
	// as a success and that is neither 4xx nor 5xx: a 1xx (101), or a
	// 2xx or 3xx outside its expected statuses.
	StatusOther
	Protocol
	Partial // the system answered, but said the answer is incomplete (a query's isPartial)
	Interrupted
	NumClasses
)

var classNames = [NumClasses]string{
	OK:          "ok",
	Timeout:     "timeout",
	DNS:         "dns",
	Connect:     "connect",
	TLS:         "tls",
	Status4xx:   "status_4xx",
	RateLimited: "rate_limited",
	Status5xx:   "status_5xx",
	StatusOther: "status_other",
	Protocol:    "protocol",
	Partial:     "partial",
	Interrupted: "interrupted",
}

func (c Class) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// ParseClass is the inverse of Class.String.
func ParseClass(s string) (Class, error) {
	for i, n := range classNames {
		if n == s {
			return Class(i), nil
		}
	}
	return 0, fmt.Errorf("unknown error class %q", s)
}

// Counts holds a count per class.
type Counts [NumClasses]int64

// Errors is the number of failed operations (every class but OK).
func (c *Counts) Errors() int64 {
	var n int64
	for i := OK + 1; i < NumClasses; i++ {
		n += c[i]
	}
	return n
}

// Total is the number of operations of any class.
func (c *Counts) Total() int64 { return c[OK] + c.Errors() }

// Add adds o into c.
func (c *Counts) Add(o *Counts) {
	for i := range c {
		c[i] += o[i]
	}
}
