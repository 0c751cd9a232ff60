// Package schematest validates TOML documents against the agreement's JSON
// Schema the way an editor does, for the tests that hold a document to the
// schema: the schema's own (generator/agreement) and tenancy init's template
// (cmd/tenancy). It takes the schema as bytes, so it imports no package of
// the pipeline.
package schematest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Compile compiles schema with a real validator; compiling also checks it
// against the draft-07 meta-schema.
func Compile(t *testing.T, schema []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("tenancy.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("tenancy.schema.json")
	if err != nil {
		t.Fatalf("compile tenancy.schema.json: %v", err)
	}
	return sch
}

// TOMLAsJSON converts a TOML document to the JSON value an editor validates,
// the way Taplo does: tables become objects, arrays arrays.
func TOMLAsJSON(t *testing.T, src string) any {
	t.Helper()
	var m map[string]any
	if err := toml.Unmarshal([]byte(src), &m); err != nil {
		t.Fatalf("TOML: %v", err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
