package load

// Accepts is accepts, go-toml's verdict in linear time, for the tests
// that hold it to go-toml's decoder.
var Accepts = accepts
