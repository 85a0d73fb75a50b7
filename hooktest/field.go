package hooktest

// Field walks a path of map keys (string) and list indexes (int) through a value decoded from
// JSON (maps of string to any, slices of any) and returns what it finds there, or nil when a step
// does not exist or has another shape.
func Field(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k < 0 || k >= len(l) {
				return nil
			}
			v = l[k]
		default:
			return nil
		}
	}
	return v
}
