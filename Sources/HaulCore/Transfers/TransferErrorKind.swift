/// The kinds of transfer error, spelled as the contract's error names (`org.haul.Haul1.Error.<rawValue>`).
package enum TransferErrorKind: String, Sendable, Codable, CaseIterable {
    case invalidArgument = "InvalidArgument"
    case notFound = "NotFound"
    case fileExists = "FileExists"
    case permissionDenied = "PermissionDenied"
    case network = "Network"
    case http = "HTTP"
    case cancelled = "Cancelled"
    case checksumMismatch = "ChecksumMismatch"
    case diskFull = "DiskFull"
    case timeout = "Timeout"
}
