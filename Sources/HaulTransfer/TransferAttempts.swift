import FoundationEssentials
package import HaulCore
import Synchronization

/// hauld's attempts, on ``TransferClient``. A download continues from what its files hold (``DownloadStart``: an
/// offset on one connection, a segment plan on several), is checked against its SHA-256 if one was asked for and put
/// in place; an upload streams its file. Each attempt keeps to its task's `RateLimit` and the limits of ``RateGate``.
package struct TransferAttempts: AttemptRunner {
    private let client: TransferClient
    private let rates: RateGate
    private let connectionReleased: @Sendable () async -> Void

    /// `connectionReleased` hears of every attempt that may have left its connection in the client's pool: one that
    /// ended by itself (a stopped or cancelled one closes its connection at once).
    package init(
        client: TransferClient, rates: RateGate = RateGate(), connectionReleased: @escaping @Sendable () async -> Void = {}
    ) {
        self.client = client
        self.rates = rates
        self.connectionReleased = connectionReleased
    }

    package func run(_ record: TaskRecord, reports: AttemptReports) async -> AttemptResult {
        let heads = HeadDelivery()
        let direction = record.kind.rateDirection
        rates.setLimit(record.rateLimit, of: record.id, direction: direction)
        // What it held of a shared limit goes back to the others when it ends.
        defer { rates.remove(record.id) }
        let rate = rates.meter(for: record.id, direction: direction)
        let result: AttemptResult
        do throws(TransferFailure) {
            switch record.kind {
            case .download:
                let size = try await download(record, reports: reports, rate: rate) { head in
                    heads.send { await reports.head(head) }
                }
                result = .downloaded(size: size)
            case .upload:
                result = .uploaded(status: try await upload(record, progress: reports.progress, rate: rate))
            }
        } catch where TransferClient.needsOneConnection(error) {
            result = .mustRestartOnOneConnection(error)
        } catch {
            result = .failed(error)
        }
        await heads.delivered()
        switch result {
        case .failed(let failure) where Task.isCancelled || failure == .cancelled: break
        case .mustRestartOnOneConnection where Task.isCancelled: break
        default: await connectionReleased()
        }
        return result
    }

    package func shutdown() async {
        await client.shutdown()
    }

    /// Returns the size of the file put in place.
    private func download(
        _ record: TaskRecord, reports: AttemptReports, rate: RateMeter,
        onHead: @escaping @Sendable (DownloadHead) -> Void
    ) async throws(TransferFailure) -> UInt64 {
        let url = try Self.url(of: record)
        // A download into a folder names its file (and so its partial file) at its first response.
        let named = ChosenPath(record.awaitsName ? nil : record.path)
        let partial = record.awaitsName ? nil : DownloadCompletion.partialPath(for: record.path)
        let start = DownloadStart(record, partialSize: partial.map(DownloadCompletion.size(of:)) ?? 0)
        let probe = reports.progress
        probe.set(bytes: start.bytesDone, expected: record.expectedTotal)
        switch start {
        case .single(let offset, let validator):
            let naming = { @Sendable (contentDisposition: String?, finalURL: URL) in
                let result = await reports.name(contentDisposition, finalURL)
                if case .success(let path) = result { named.set(path) }
                return result
            }
            _ = try await client.download(
                url: url, partialPath: partial, offset: offset, validator: validator, headers: record.headers,
                naming: record.awaitsName ? naming : nil, rate: rate, onHead: onHead,
                onProgress: { probe.set(bytes: $0) }
            )
        case .segmented(let connections, let plan, let validator):
            guard let partial else { throw .network("a download into a folder is named on one connection") }
            let plans = reports.plans
            _ = try await client.download(
                url: url, partialPath: partial, connections: connections, plan: plan, validator: validator,
                headers: record.headers, rate: rate, onHead: onHead, onProgress: { probe.set(bytes: $0) },
                onPlan: { plans.post($0) }
            )
        }
        if Task.isCancelled { throw .cancelled }
        guard let destination = named.path else { throw .network("the download ended before its name") }
        let written = DownloadCompletion.partialPath(for: destination)
        if let expected = record.sha256 { try await DownloadCompletion.verifyOffLoop(written, sha256: expected) }
        // Hashing a large file takes a while: a Suspend or SIGTERM meanwhile leaves the file where it is.
        if Task.isCancelled { throw .cancelled }
        try DownloadCompletion.place(destination: destination, overwrite: record.overwrite)
        return DownloadCompletion.size(of: destination)
    }

    /// Returns the server's status.
    private func upload(
        _ record: TaskRecord, progress: ProgressProbe, rate: RateMeter
    ) async throws(TransferFailure) -> UInt32 {
        let url = try Self.url(of: record)
        progress.set(bytes: 0, expected: Int64(clamping: DownloadCompletion.size(of: record.path)))
        let status = try await client.upload(
            url: url, path: record.path, method: record.method, headers: record.headers, rate: rate,
            onProgress: { progress.set(bytes: $0, expected: $1) }
        )
        return UInt32(clamping: status)
    }

    private static func url(of record: TaskRecord) throws(TransferFailure) -> URL {
        do {
            return try TransferURL(record.url).url
        } catch {
            throw TransferFailure(kind: .invalidArgument, message: error.description, isTransient: false)
        }
    }
}

/// The destination's path once known: a download into a folder learns it from its first response, on the HTTP
/// client's thread.
private final class ChosenPath: Sendable {
    private let value: Mutex<String?>

    init(_ path: String?) { value = Mutex(path) }

    var path: String? { value.withLock { $0 } }

    func set(_ path: String) { value.withLock { $0 = path } }
}
