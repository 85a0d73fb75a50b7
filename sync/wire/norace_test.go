//go:build !race

package wire_test

// allocationSlack widens allocation bounds under the race detector; without it, none.
const allocationSlack = 1
