/// Options of `UploadWithOptions` (`dbus/org.haul.Haul1.xml`).
package struct UploadOptions: Equatable, Sendable {
    package enum Method: String, Sendable, CaseIterable { case put = "PUT", post = "POST" }

    package var method: Method = .put
    package var headers: [String: String] = [:]
    /// The task's own rate limit in bytes per second (0: none), within ``RateLimitRule``.
    package var rateLimit: UInt64 = 0
    package var priority = TransferPriority.foreground
    /// Whether the task may use a metered network; nil takes the priority's default.
    package var allowMetered: Bool?
    /// Who asked for the task (D-Bus `Application`), as the service determined it.
    package var application = ""

    package init() {}
}
