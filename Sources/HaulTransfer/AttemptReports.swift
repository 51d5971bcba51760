package import FoundationEssentials
package import HaulCore

/// What a running attempt tells the task service, as it goes.
///
/// Byte counts and segment plans go into boxes the service reads on its progress tick (a hop to the service's actor
/// per chunk would cost more than the transfer); the response head goes to the service at once, since it says how to
/// resume and is saved straight away.
package struct AttemptReports: Sendable {
    /// Bytes moved so far, and the size expected.
    package let progress: ProgressProbe
    /// A segmented download's newest plan.
    package let plans: PlanBox
    /// A download's response head; called at most once an attempt, and awaited.
    package let head: @Sendable (DownloadHead) async -> Void
    /// Names the file of a download into a folder from its first response (its `Content-Disposition`, the final
    /// URL), and returns the file's path once the task says so; no byte is written before it returns.
    package let name:
        @Sendable (_ contentDisposition: String?, _ finalURL: URL) async -> Result<String, TransferFailure>

    package init(
        progress: ProgressProbe, plans: PlanBox,
        name: @escaping @Sendable (String?, URL) async -> Result<String, TransferFailure> = { _, _ in
            .failure(.network("this download has no way to name its file"))
        },
        head: @escaping @Sendable (DownloadHead) async -> Void
    ) {
        self.progress = progress
        self.plans = plans
        self.name = name
        self.head = head
    }
}
