// Package english inflects the few words of the hook's messages that follow a number, so that
// every message says "1 pod" and "2 pods" the same way.
package english

import "fmt"

// Plural is one when n is 1 and many otherwise, 0 and negative numbers included.
func Plural[N ~int | ~int32 | ~int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count renders n with its noun: "1 replica", "3 replicas". The plural is the singular with an
// "s" unless a plural form is given: Count(2, "child", "children").
func Count[N ~int | ~int32 | ~int64](n N, singular string, pluralForm ...string) string {
	many := singular + "s"
	if len(pluralForm) > 0 {
		many = pluralForm[0]
	}
	return fmt.Sprintf("%d %s", n, Plural(n, singular, many))
}
