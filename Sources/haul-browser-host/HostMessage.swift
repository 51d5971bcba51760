import DBusKit
import FoundationEssentials
import HaulContract

/// A message from the extension (see docs/browser.md).
///
/// `download` creates a suspended task; once the browser has dropped its own download, `start` resumes the task,
/// or `withdraw` removes it when the browser finished first. A download is thus fetched once and kept once, and a
/// task whose answer came too late for the browser never starts on its own.
enum HostMessage: Equatable {
    case download(DownloadOffer)
    case start(ObjectPath)
    case withdraw(ObjectPath)

    /// What the browser knows of a download it is about to start.
    struct DownloadOffer: Equatable {
        /// The final URL, after redirects.
        let url: String
        /// The page the download came from; empty when the browser sends none.
        let referrer: String
        /// The browser's own name for the file.
        let filename: String
        /// A `Cookie` header with the cookies the browser would send to `url`; a secret.
        let cookies: String
        let userAgent: String
    }

    /// Why a message is not one the host understands: a sentence that never quotes the message, which may hold
    /// cookies.
    struct Malformed: Error, Equatable {
        let reason: String
    }

    init(json: [UInt8]) throws(Malformed) {
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: Data(json))
        } catch {
            throw Malformed(reason: Self.describe(error))
        }
        switch fields.type {
        case "download":
            guard let url = fields.url, !url.isEmpty else { throw Malformed(reason: "a download needs a url") }
            self = .download(
                DownloadOffer(
                    url: url, referrer: fields.referrer ?? "", filename: fields.filename ?? "",
                    cookies: fields.cookies ?? "", userAgent: fields.userAgent ?? ""
                ))
        case "start", "withdraw":
            guard let text = fields.task, let path = ObjectPath(text), HaulBus.taskID(of: path) != nil else {
                throw Malformed(reason: "\(fields.type) needs the task hauld gave")
            }
            self = fields.type == "start" ? .start(path) : .withdraw(path)
        default:
            throw Malformed(reason: "unknown message type")
        }
    }

    /// The members the messages may have; unknown members (the size the browser expects) are ignored.
    private struct Fields: Decodable {
        let type: String
        let url: String?
        let referrer: String?
        let filename: String?
        let cookies: String?
        let userAgent: String?
        let task: String?
    }

    /// The decoder's complaint without the values it saw: which member, and what was wrong with it.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "not a JSON object" }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "wrong type for \(memberName(context))"
        case .keyNotFound(let key, _):
            return "no member \(key.stringValue)"
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return "not JSON in UTF-8"
        case .dataCorrupted(let context):
            return "invalid value for \(memberName(context))"
        @unknown default:
            return "not a message"
        }
    }

    private static func memberName(_ context: DecodingError.Context) -> String {
        context.codingPath.last.map(\.stringValue) ?? "the message"
    }
}
