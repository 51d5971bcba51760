/// Bounds of the `headers` option, those of common servers (Apache: 100 fields of at most 8190 bytes; nginx: lines of
/// 8 KiB). A line counts as sent: `Name: value` and its line break.
package enum RequestHeaderLimits {
    package static let maximumCount = 100
    package static let maximumLineBytes = 8192
    package static let maximumBytes = 32_768
}
