// The token chips on their own: a long text draws only the rows a scroll area exposes, and those rows look
// exactly as they do when the whole widget is drawn.
#include <QImage>
#include <QSet>
#include <QtTest>

#include "window/tokenchips.h"

using namespace attnscope;

class TestTokenChips : public QObject {
    Q_OBJECT
private slots:
    void aPartDrawnAloneIsThatPartOfTheWhole()
    {
        auto snapshot = std::make_shared<Snapshot>();
        for (int i = 0; i < 3000; ++i) {
            snapshot->tokens.tokens.push_back(std::string(1 + i % 7, char('a' + i % 26)));
            snapshot->tokens.ids.push_back(i);
        }
        snapshot->settings.blockedKeys = {5, 1234, 2999};
        TokenChips chips;
        chips.resize(500, 100);
        chips.setSnapshot(snapshot);
        chips.resize(500, chips.heightForWidth(500));
        QCOMPARE(chips.chipCount(), 3000);
        QVERIFY(chips.height() > 2000);  // hundreds of rows

        const QImage whole = chips.grab().toImage();
        // A band across the middle, cut through rows, and the band holding the last chip.
        for (const QRect band : {QRect(0, chips.chipRect(1234).top() - 7, 500, 61), QRect(0, chips.chipRect(2999).top() - 3, 500, 40)}) {
            const QRect part = band.intersected(chips.rect());
            const QImage drawn = chips.grab(part).toImage();
            QCOMPARE(drawn.size(), part.size() * whole.devicePixelRatio());
            QVERIFY2(drawn == whole.copy(part), qPrintable(QStringLiteral("the band at y = %1 differs").arg(part.top())));
            // Chips are drawn there (borders, fills, letters), not a blank band.
            QSet<QRgb> colours;
            for (int y = 0; y < drawn.height(); ++y)
                for (int x = 0; x < drawn.width(); ++x) colours.insert(drawn.pixel(x, y));
            QVERIFY2(colours.size() > 8, qPrintable(QStringLiteral("%1 colours").arg(colours.size())));
        }
    }
};

QTEST_MAIN(TestTokenChips)
#include "tst_tokenchips.moc"
