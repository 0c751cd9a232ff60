package main

import "github.com/tenancy-dev/tenancy/generator/chargeback"

// departmentColumns adds the department column after team, for an
// agreement with departments; without departments the statement keeps the
// columns it always had, so scripts that read them by position still work.
// A department's row has team "*": its teams summed.
func departmentColumns(cells func(chargeback.Row) []string) ([]string, func(chargeback.Row) []string) {
	columns := append([]string{Columns[0], "department"}, Columns[1:]...)
	return columns, func(r chargeback.Row) []string {
		c := cells(r)
		return append([]string{c[0], r.Department}, c[1:]...)
	}
}
