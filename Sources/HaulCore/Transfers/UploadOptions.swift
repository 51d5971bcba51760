/// Options of `UploadWithOptions` (`dbus/org.haul.Haul1.xml`).
package struct UploadOptions: Equatable, Sendable {
    package enum Method: String, Sendable { case put = "PUT", post = "POST" }

    package var method: Method = .put
    package var headers: [String: String] = [:]

    package init() {}
}
