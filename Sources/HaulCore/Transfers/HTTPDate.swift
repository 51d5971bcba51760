/// An HTTP-date (RFC 9110 §5.6.7), as seconds since 1970-01-01 UTC. Parsed by hand: `DateFormatter` would bring
/// Foundation's ICU into hauld for one rarely seen header.
enum HTTPDate {
    /// The preferred IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the obsolete RFC 850
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`) forms, which RFC 9110 asks
    /// recipients to accept. Runs of spaces count as one. The day name is checked to be one, not to match the date.
    ///
    /// An RFC 850 two-digit year is read in the century that puts it at most 50 years after `currentYear`.
    static func parse(_ string: some StringProtocol, currentYear: Int) -> Int64? {
        let words = string.split(separator: " ")
        switch words.count {
        case 6:  // IMF-fixdate: day-name "," day month year time "GMT"
            guard words[0].hasSuffix(","), dayNames.contains(String(words[0].dropLast())), words[5] == "GMT",
                let day = number(words[1], digits: 2...2), let month = month(words[2]),
                let year = number(words[3], digits: 4...4)
            else { return nil }
            return timestamp(year: year, month: month, day: day, time: words[4])
        case 4:  // RFC 850: day-name-l "," day "-" month "-" 2DIGIT time "GMT"
            let date = words[1].split(separator: "-", omittingEmptySubsequences: false)
            guard words[0].hasSuffix(","), longDayNames.contains(String(words[0].dropLast())), words[3] == "GMT",
                date.count == 3, let day = number(date[0], digits: 2...2), let month = month(date[1]),
                let shortYear = number(date[2], digits: 2...2)
            else { return nil }
            var year = currentYear - currentYear % 100 + shortYear
            if year > currentYear + 50 { year -= 100 }
            return timestamp(year: year, month: month, day: day, time: words[2])
        case 5:  // asctime: day-name month day time year
            guard dayNames.contains(String(words[0])), let month = month(words[1]),
                let day = number(words[2], digits: 1...2), let year = number(words[4], digits: 4...4)
            else { return nil }
            return timestamp(year: year, month: month, day: day, time: words[3])
        default:
            return nil
        }
    }

    private static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// 1 for January; names are case-sensitive, as the grammar has them.
    private static func month(_ name: some StringProtocol) -> Int? {
        monthNames.firstIndex(of: String(name)).map { $0 + 1 }
    }

    /// `HH:MM:SS` on the given day; nil for a day the month does not have or a time out of range (a leap second,
    /// `:60`, is allowed by the grammar and counted as the next second).
    private static func timestamp(year: Int, month: Int, day: Int, time: some StringProtocol) -> Int64? {
        let parts = time.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let hour = number(parts[0], digits: 2...2),
            let minute = number(parts[1], digits: 2...2), let second = number(parts[2], digits: 2...2),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
            day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// Decimal digits only (`Int` alone would take a sign).
    private static func number(_ text: some StringProtocol, digits: ClosedRange<Int>) -> Int? {
        guard digits.contains(text.utf8.count), text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return Int(text)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given day of the proleptic Gregorian calendar (Howard Hinnant's
    /// `days_from_civil`).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
