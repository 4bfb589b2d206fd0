// Package layers holds no code: its test reads the import graph of
// perflab's packages (go list -deps) and fails when an arrow points the
// wrong way, so that the layering README's "Layout" describes cannot
// regress unseen.
package layers
