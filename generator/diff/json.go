package diff

import "encoding/json"

// JSON renders the report for tools: the Report type, indented, with a
// trailing newline. Absent sides of a before → after pair are left out.
func JSON(r *Report) ([]byte, error) {
	return marshalIndented(r)
}

func marshalIndented(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
