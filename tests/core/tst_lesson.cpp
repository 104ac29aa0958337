// The lesson format: the shipped lessons parse and keep its rules (a question at the end, exactly one right
// answer, feedback on every choice, on every topic the issue lists), and a teacher's mistakes are named.
#include <QDir>
#include <QTest>

#include "core/scene/lesson.h"

using namespace attnscope;

namespace {

const char* kGood = R"({
  "format": "attnscope-lesson", "version": 1, "title": "T", "summary": "S", "order": 3,
  "steps": [
    {"title": "one", "text": "first\n\nsecond", "state": {"text": "a b", "settings": {"mask": "none"}, "tab": "attention"},
     "highlight": "causal"},
    {"title": "two", "text": "x", "highlight": ["sqrt-dk", "temperature"],
     "question": {"prompt": "p?", "choices": [{"text": "a", "feedback": "no"}, {"text": "b", "correct": true, "feedback": "yes"}]}}
  ]
})";

QString lessonsFolder() { return QStringLiteral(ATTNSCOPE_LESSON_DIR); }

} // namespace

class TestLesson : public QObject {
    Q_OBJECT
private slots:
    void readsEveryPart()
    {
        const Result<Lesson> r = parseLesson(kGood, "good.json");
        QVERIFY2(r.hasValue(), r.error().c_str());
        QCOMPARE(r->title, std::string("T"));
        QCOMPARE(r->order, 3);
        QCOMPARE(r->steps.size(), std::size_t(2));
        QCOMPARE(r->steps[0].highlight, std::vector<std::string>{"causal"});
        QCOMPARE(*r->steps[0].state.text, std::string("a b"));
        QVERIFY(r->steps[0].state.settings->mask == MaskKind::None);
        QVERIFY(!r->steps[0].state.model);
        QVERIFY(!r->steps[1].state.text);
        QCOMPARE(r->steps[1].question->correctIndex(), 1);
        QCOMPARE(r->steps[1].question->choices[0].feedback, std::string("no"));
    }

    void mistakesAreNamed_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addColumn<QString>("replacement");
        QTest::addColumn<QString>("says");
        QTest::newRow("no question at the end") << R"("question": {"prompt": "p?", "choices": [{"text": "a", "feedback": "no"}, {"text": "b", "correct": true, "feedback": "yes"}]})"
                                                << R"("text": "x")" << "check-yourself question";
        QTest::newRow("two right answers") << R"({"text": "a", "feedback": "no"})" << R"({"text": "a", "correct": true, "feedback": "no"})"
                                           << "mark exactly one";
        QTest::newRow("a choice without feedback") << R"({"text": "a", "feedback": "no"})" << R"({"text": "a"})" << "no \"feedback\"";
        QTest::newRow("a typing mistake") << R"("highlight": "causal")" << R"("higlight": "causal")" << "unknown field \"higlight\"";
        QTest::newRow("a bad setting") << R"({"mask": "none"})" << R"({"mask": "half"})" << "'sinks:K,window:W', 'global:I,J,...;window:W', 'dilated:W,D', 'block:B' or 'random:R,SEED', not 'half'.";
        QTest::newRow("an empty title") << R"("title": "one")" << R"("title": "  ")" << "empty \"title\"";
        QTest::newRow("a newer version") << R"("version": 1)" << R"("version": 2)" << "newer AttnScope";
        QTest::newRow("correct as text") << R"("correct": true)" << R"("correct": "yes")" << "true or false";
    }
    void mistakesAreNamed()
    {
        QFETCH(QString, change);
        QFETCH(QString, replacement);
        QFETCH(QString, says);
        QString text = QString::fromUtf8(kGood);
        QVERIFY2(text.contains(change), qPrintable(change));
        text.replace(text.indexOf(change), change.size(), replacement);
        const Result<Lesson> r = parseLesson(text.toStdString(), "'mine.json'");
        QVERIFY(!r.hasValue());
        const QString error = QString::fromStdString(r.error());
        QVERIFY2(error.contains(says), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("mine.json")), qPrintable(error));
    }

    // Every file shipped in resources/lessons/ is a valid lesson, and together they cover the issue's topics.
    void theShippedLessonsAreValid()
    {
        const QStringList files = QDir(lessonsFolder()).entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
        QVERIFY2(files.size() >= 9, qPrintable(QStringLiteral("%1 lessons in %2").arg(files.size()).arg(lessonsFolder())));
        QStringList titles;
        for (const QString& file : files) {
            const Result<Lesson> r = readLessonFile(QDir(lessonsFolder()).filePath(file).toStdString());
            QVERIFY2(r.hasValue(), r.error().c_str());
            titles << QString::fromStdString(r->title).toLower();
            for (const LessonStep& step : r->steps) {
                // Each step sets the whole state it relies on, so it can be shown on its own.
                QVERIFY2(step.state.model && step.state.text && step.state.settings && step.state.focus && step.state.tab,
                         qPrintable(file + ": " + QString::fromStdString(step.title)));
                QVERIFY2(!step.highlight.empty(), qPrintable(file + ": " + QString::fromStdString(step.title)));
            }
        }
        const QString all = titles.join(QLatin1Char('|'));
        for (const char* topic : {"q, k and v", "scor", "√dₖ", "softmax", "causal", "padding", "heads", "position", "weights can"})
            QVERIFY2(all.contains(QString::fromUtf8(topic)), topic);
    }
};

QTEST_APPLESS_MAIN(TestLesson)
#include "tst_lesson.moc"
