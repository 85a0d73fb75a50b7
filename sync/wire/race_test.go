//go:build race

package wire_test

// allocationSlack widens allocation bounds under the race detector, which allocates shadow memory
// for what the code allocates.
const allocationSlack = 2
