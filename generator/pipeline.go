package generator

import (
	"errors"

	"github.com/tenancy-dev/tenancy/generator/plan"
)

func render(src Source, opts Options) (*Result, error) {
	return nil, errors.New("not implemented yet")
}

func check(src Source) (*plan.Agreement, []Diagnostic, error) {
	return nil, nil, errors.New("not implemented yet")
}
