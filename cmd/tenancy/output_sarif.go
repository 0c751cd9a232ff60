package main

import (
	"io"
	"net/url"

	"github.com/owenrumney/go-sarif/v2/sarif"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/internal/version"
)

// sarifRules are the SARIF rules of tenancy check: one per diagnostic type,
// which is apimachinery's field.ErrorType (its String gives "Invalid value"
// for two types, so the short descriptions are written here), in a fixed
// order so that rule indices never move.
var sarifRules = []struct {
	typ         field.ErrorType
	short, full string
}{
	{field.ErrorTypeInvalid, "Invalid value", "A value of the agreement is invalid, or the agreement cannot be rendered as written."},
	{field.ErrorTypeRequired, "Required value", "A required key or table is missing."},
	{field.ErrorTypeNotSupported, "Unsupported key or value", "A key the format does not have, or a value outside the ones it accepts."},
	{field.ErrorTypeDuplicate, "Duplicate value", "A name or value is given twice where it must be unique."},
	{field.ErrorTypeForbidden, "Forbidden", "A setting is not allowed here, or not together with another one."},
	{field.ErrorTypeTypeInvalid, "Wrong type", "A value has the wrong TOML type."},
	{field.ErrorTypeTooLong, "Too long", "A value is longer than the scheduler's API accepts."},
	{field.ErrorTypeTooMany, "Too many", "A list has more entries than the scheduler's API accepts."},
	{field.ErrorTypeNotFound, "Not found", "A value names something the agreement does not declare."},
	{field.ErrorTypeInternal, "Internal error", "tenancy failed on the agreement; please report it."},
}

// writeSARIF writes the diagnostics as a SARIF 2.1.0 log of one run, for
// GitHub code scanning (github/codeql-action/upload-sarif) and other tools
// that read static-analysis results: errors at level error, warnings at
// level warning, each at its file, line and column (in code points, the
// run's columnKind).
func writeSARIF(w io.Writer, diags diag.List, cols columns) error {
	report, err := sarif.New(sarif.Version210)
	if err != nil {
		return err
	}
	v := version.Version
	run := sarif.NewRun(sarif.Tool{Driver: &sarif.ToolComponent{Name: "tenancy", Version: &v}})
	run.WithColumnKind("unicodeCodePoints")
	index := map[field.ErrorType]int{}
	for i, r := range sarifRules {
		index[r.typ] = i
		run.AddRule(string(r.typ)).
			WithName(string(r.typ)).
			WithShortDescription(sarif.NewMultiformatMessageString(r.short)).
			WithFullDescription(sarif.NewMultiformatMessageString(r.full)).
			WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel("error"))
	}
	for _, d := range diags {
		typ := d.Type
		if _, ok := index[typ]; !ok {
			typ = field.ErrorTypeInvalid
		}
		level := "error"
		if d.Severity == diag.Warning {
			level = "warning"
		}
		msg := d.Message
		if f := d.Field(); f != "" {
			msg = f + ": " + msg
		}
		res := run.CreateResultForRule(string(typ)).
			WithRuleIndex(index[typ]).
			WithLevel(level).
			WithMessage(sarif.NewTextMessage(msg))
		loc := sarif.NewLocation()
		if f := annotationFile(d.File); f != "" {
			pl := sarif.NewPhysicalLocation().WithArtifactLocation(
				sarif.NewSimpleArtifactLocation((&url.URL{Path: f}).String()))
			if d.Pos.Line > 0 {
				region := sarif.NewRegion().WithStartLine(d.Pos.Line)
				if d.Pos.Column > 0 {
					region.WithStartColumn(cols.at(d))
				}
				pl.WithRegion(region)
			}
			loc.WithPhysicalLocation(pl)
		}
		if f := d.Field(); f != "" {
			loc.AddLogicalLocations(sarif.NewLogicalLocation().WithFullyQualifiedName(f).WithKind("member"))
		}
		if loc.PhysicalLocation != nil || len(loc.LogicalLocations) > 0 {
			res.AddLocation(loc)
		}
	}
	report.AddRun(run)
	if err := report.PrettyWrite(w); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n")
	return err
}
