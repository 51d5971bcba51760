/// The response head of a download attempt, as the service needs it.
package struct DownloadHead: Sendable {
    package let status: Int
    package let headers: [(String, String)]
    /// Where the body starts in the file: 0 for a full response, the resume offset for a 206.
    package let offset: Int64
    package let expectedTotal: Int64?

    package init(status: Int, headers: [(String, String)], offset: Int64, expectedTotal: Int64?) {
        self.status = status
        self.headers = headers
        self.offset = offset
        self.expectedTotal = expectedTotal
    }
}
