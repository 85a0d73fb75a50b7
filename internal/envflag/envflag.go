// Package envflag sets a program's flags from its environment, so that every flag of the hook
// and of the notifier also reads a variable: --cache-bytes reads CACHE_BYTES.
package envflag

import (
	"flag"
	"fmt"
	"strings"
)

// Set sets each flag of fs whose variable getenv finds non-empty: the flag's name upper-cased,
// dashes made underscores. Flags given on the command line, parsed after it, win. Its error names
// the first variable whose value the flag refused, and leaves the flags after it unread.
func Set(fs *flag.FlagSet, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		key := strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(key); v != "" && err == nil {
			if setErr := fs.Set(f.Name, v); setErr != nil {
				err = fmt.Errorf("environment %s=%q: %w", key, v, setErr)
			}
		}
	})
	return err
}
