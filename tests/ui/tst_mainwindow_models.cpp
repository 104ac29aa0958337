// Opening models from the window: a GPT-2 folder, the menu (the newest request wins), the hub cache, a
// download while the window works, the recent list, the random-model dialog and dropped folders.
#include "tst_mainwindow.h"

// The whole way through for a checkpoint in the Hugging Face layout: the window loads the folder, shows the
// byte-level BPE tokens (a leading space as '·'), and draws the core's weights for that model.
void TestMainWindow::opensAGpt2FolderAndShowsItsNumbers()
{
    QTemporaryDir tmp;
    const std::string folder = tinygpt2::writeFolder(tmp, "tiny-gpt2", tinygpt2::tinyTensors(7));
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    QVERIFY2(w.openModel(QString::fromStdString(folder)).ok(), "the tiny GPT-2 folder did not load");
    QCOMPARE(QString::fromStdString(w.document()->model()->config.name), QStringLiteral("tiny-gpt2"));
    w.sentenceEdit()->setText(QStringLiteral("Hello world"));
    QCOMPARE(w.tokenChips()->chipCount(), 2);
    QCOMPARE(w.tokenChips()->chipId(0), 15496);
    QCOMPARE(w.tokenChips()->chipId(1), 995);
    QCOMPARE(w.tokenChips()->chipText(1), QStringLiteral("·world"));
    w.document()->setFocus({1, 1});
    const numericcheck::Worst worst = worstDifference(*w.heatmap(), coreTrace(*w.document()), w.document()->focus());
    QVERIFY2(worst.within(1e-6), worst.message().c_str());
    QCOMPARE(int(w.nextTokens()->shown().size()), Snapshot::kNextTokens);
    // Over the tiny model's 16-token context, truncation keeps a prefix of exactly 16 BPE tokens.
    w.sentenceEdit()->setText(QStringLiteral("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen"));
    QVERIFY(w.document()->tokensOverContext() > 0);
    w.document()->truncateToContext();
    QVERIFY(w.document()->error().isEmpty());
    QCOMPARE(w.tokenChips()->chipCount(), 16);
    QVERIFY(w.sentenceEdit()->text().startsWith(QStringLiteral("one two three")));
    // A folder that is not a model is refused with a sentence, and the loaded model stays.
    const Status bad = w.openModel(tmp.path() + QStringLiteral("/nothing-here"));
    QVERIFY(!bad.ok());
    QVERIFY2(!bad.error().empty(), "no sentence for a missing folder");
    QCOMPARE(QString::fromStdString(w.document()->model()->config.name), QStringLiteral("tiny-gpt2"));
}

// The Model menu's open runs the loader off the GUI thread: the call returns at once, the model changes
// when the load is done, and of two opens in quick succession only the second is kept.
void TestMainWindow::menuOpenLoadsInTheBackgroundAndTheNewestWins()
{
    QTemporaryDir tmp;
    const std::string folder = tinygpt2::writeFolder(tmp, "tiny-gpt2", tinygpt2::tinyTensors(7));
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    const QString before = w.document()->modelSpec();
    QSignalSpy finished(&w, &MainWindow::modelOpenFinished);
    w.openModelInBackground(QString::fromStdString(folder));
    QVERIFY(w.isOpeningModel());
    QCOMPARE(w.document()->modelSpec(), before);  // nothing has changed yet: the load is still running
    QVERIFY(finished.wait(testing::kWorkTimeoutMs));
    QCOMPARE(finished.count(), 1);
    QCOMPARE(finished.at(0).at(1).toBool(), true);
    QVERIFY(!w.isOpeningModel());
    QCOMPARE(QString::fromStdString(w.document()->model()->config.name), QStringLiteral("tiny-gpt2"));

    finished.clear();
    const QString second = QStringLiteral("random:layers=1,heads=2,d_model=16,seed=5");
    w.openModelInBackground(QString::fromStdString(folder));
    w.openModelInBackground(second);
    QVERIFY(finished.wait(testing::kWorkTimeoutMs));
    QTest::qWait(200);  // the first open finishes too, and must change nothing
    QCOMPARE(finished.count(), 1);
    QCOMPARE(finished.at(0).at(0).toString(), second);
    QCOMPARE(w.document()->modelSpec(), second);
    QCOMPARE(w.document()->model()->config.layers, 1);
}

void TestMainWindow::randomModelDialogBuildsSpec()
{
    RandomModelDialog dialog;
    QCOMPARE(dialog.spec(), QStringLiteral("random:layers=2,heads=4,d_model=64,seed=1"));
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    QVERIFY(w.openModel(QStringLiteral("random:layers=3,heads=2,d_model=32,seed=9")).ok());
    w.sentenceEdit()->setText(kSentence);
    QCOMPARE(w.grid()->layers(), 3);
    QCOMPARE(w.grid()->heads(), 2);
    QCOMPARE(w.controls()->layerBox()->maximum(), 2);
    QCOMPARE(w.controls()->headBox()->maximum(), 1);
}

void TestMainWindow::acceptsDraggedFolderOnly()
{
    MainWindow w;
    attnscope::testing::useRandomModel(*w.document());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString file = dir.filePath(QStringLiteral("weights.bin"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    auto entered = [&w](const QString& path) {
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(path)});
        QDragEnterEvent event(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        event.ignore();
        QCoreApplication::sendEvent(&w, &event);
        return event.isAccepted();
    };
    QVERIFY(entered(dir.path()));
    QVERIFY(!entered(file));
}

void TestMainWindow::theHubCacheDialogListsWhatOpens()
{
    QTemporaryDir tmp;
    const std::filesystem::path cache = std::filesystem::path(tmp.path().toStdString()) / "hub";
    hubcache::addSnapshot(cache, "test-org/tiny-gpt2", tinygpt2::writeFolder(tmp, "a", tinygpt2::tinyTensors(1)), hubcache::commitOf('a'), "main");
    hubcache::addSnapshot(cache, "test-org/tiny-gpt2", tinygpt2::writeFolder(tmp, "b", tinygpt2::tinyTensors(2)), hubcache::commitOf('b'), "v1");
    nlohmann::json whisper = tinygpt2::tinyConfig();
    whisper["model_type"] = "whisper";
    hubcache::addSnapshot(cache, "test-org/whisper", tinygpt2::writeFolder(tmp, "w", tinygpt2::tinyTensors(1), DType::F32, whisper),
                          hubcache::commitOf('c'), "main");

    HubCacheDialog dialog(nullptr, QString::fromStdString(cache.string()));
    QTableWidget* table = dialog.table();
    QCOMPARE(table->rowCount(), 3);
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("test-org/tiny-gpt2"));
    QCOMPARE(table->item(1, 1)->text(), QStringLiteral("v1"));
    QCOMPARE(table->item(0, 2)->text(), QStringLiteral("gpt2"));
    // The parameters the safetensors header declares: 50257 × 8 embeddings and the rest of the tiny model.
    std::int64_t parameters = 0;
    for (const NamedTensor& t : tinygpt2::tinyTensors(1)) parameters += std::int64_t(t.values.size());
    QCOMPARE(table->item(0, 3)->text(), QStringLiteral("%1 k").arg(double(parameters) / 1e3, 0, 'f', 1));
    // The first model that opens is chosen, so Enter opens it; a revision other than main is named.
    QCOMPARE(dialog.spec(), QStringLiteral("hf:test-org/tiny-gpt2"));
    QVERIFY(dialog.openButton()->isEnabled());
    table->selectRow(1);
    QCOMPARE(dialog.spec(), QStringLiteral("hf:test-org/tiny-gpt2@v1"));
    // One that does not open says why, and cannot be chosen.
    table->selectRow(2);
    QVERIFY(dialog.spec().isEmpty());
    QVERIFY(!dialog.openButton()->isEnabled());
    QVERIFY2(table->item(2, 5)->text().contains(QStringLiteral("\"whisper\"")), qPrintable(table->item(2, 5)->text()));

    // An empty cache says how to fill it.
    HubCacheDialog empty(nullptr, tmp.filePath(QStringLiteral("nothing")));
    QCOMPARE(empty.table()->rowCount(), 0);
    QVERIFY(!empty.openButton()->isEnabled());
}

void TestMainWindow::modelsOpenedFromTheMenuAreRecent()
{
    QStandardPaths::setTestModeEnabled(true);  // the recent list goes to a test folder, not the person's
    for (const QString& spec : Preferences::recentModels()) Preferences::removeRecentModel(spec);
    QTemporaryDir tmp;
    const std::filesystem::path cache = std::filesystem::path(tmp.path().toStdString()) / "hub";
    hubcache::addSnapshot(cache, "test-org/tiny-gpt2", tinygpt2::writeFolder(tmp, "a", tinygpt2::tinyTensors(1)), hubcache::commitOf('a'), "main");
    const QString folder = QString::fromStdString(tinygpt2::writeFolder(tmp, "plain", tinygpt2::tinyTensors(2)));
    const QByteArray oldCache = qgetenv("HF_HUB_CACHE");
    qputenv("HF_HUB_CACHE", QByteArray::fromStdString(cache.string()));

    MainWindow w;
    w.show();
    QSignalSpy finished(&w, &MainWindow::modelOpenFinished);
    const auto openAndWait = [&](const QString& spec) {
        finished.clear();
        w.modelMenu()->open(spec);
        return finished.wait(testing::kWorkTimeoutMs) || !finished.isEmpty();
    };
    QVERIFY(openAndWait(QStringLiteral("hf:test-org/tiny-gpt2")));
    QCOMPARE(finished.last().at(1).toBool(), true);
    QCOMPARE(QString::fromStdString(w.document()->model()->config.name), QStringLiteral("test-org/tiny-gpt2"));
    QVERIFY(openAndWait(folder));
    QVERIFY(openAndWait(QStringLiteral("random:layers=1,heads=2,d_model=16,seed=3")));  // not a model to find again
    QCOMPARE(Preferences::recentModels(), (QStringList{folder, QStringLiteral("hf:test-org/tiny-gpt2")}));
    QList<QAction*> recent = w.modelMenu()->recentMenu()->actions();
    QCOMPARE(recent.size(), 2);
    QCOMPARE(recent[1]->data().toString(), QStringLiteral("hf:test-org/tiny-gpt2"));
    QVERIFY(recent[1]->text().contains(QStringLiteral("Hugging Face cache")));

    // Choosing a recent model opens it and puts it first.
    finished.clear();
    recent[1]->trigger();
    QVERIFY(finished.wait(testing::kWorkTimeoutMs) || !finished.isEmpty());
    QCOMPARE(QString::fromStdString(w.document()->model()->config.name), QStringLiteral("test-org/tiny-gpt2"));
    QCOMPARE(Preferences::recentModels().first(), QStringLiteral("hf:test-org/tiny-gpt2"));

    // A recent folder that is gone says so (the dialog is closed here) and leaves the list.
    QDir(folder).removeRecursively();
    QTimer closer;
    connect(&closer, &QTimer::timeout, [] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) box->accept();
    });
    closer.start(50);
    QVERIFY(openAndWait(folder));
    closer.stop();
    QCOMPARE(finished.last().at(1).toBool(), false);
    QCOMPARE(Preferences::recentModels(), QStringList{QStringLiteral("hf:test-org/tiny-gpt2")});
    QCOMPARE(w.modelMenu()->recentMenu()->actions().size(), 1);

    if (oldCache.isNull()) qunsetenv("HF_HUB_CACHE");
    else qputenv("HF_HUB_CACHE", oldCache);
    Preferences::removeRecentModel(QStringLiteral("hf:test-org/tiny-gpt2"));
}

// Model > Download… against the CLI tests' stand-in hub: the window answers while the bytes trickle in,
// Cancel keeps what was complete, the next download resumes with a range and the model opens.
void TestMainWindow::aDownloadRunsWhileTheWindowWorks()
{
    QStandardPaths::setTestModeEnabled(true);
    QTemporaryDir tmp;
    const std::filesystem::path folder = tinygpt2::writeFolder(tmp, "src", tinygpt2::tinyTensors(5));
    const auto bytes = [](const std::filesystem::path& p) {
        QFile f(QString::fromStdString(p.string()));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    hubtest::Repo repo;
    repo.commit = QByteArray(40, 'd');
    for (const char* f : {"config.json", "vocab.json", "merges.txt"}) repo.files[f] = {bytes(folder / f), false};
    repo.files["model.safetensors"] = {bytes(folder / "model.safetensors"), true};
    hubtest::HubServer server;
    server.addRepo("test-org/tiny-gpt2", repo);
    const std::filesystem::path cache = std::filesystem::path(tmp.path().toStdString()) / "hub";
    const std::filesystem::path snapshot = cache / "models--test-org--tiny-gpt2" / "snapshots" / std::string(40, 'd');
    qputenv("HF_HUB_CACHE", QByteArray::fromStdString(cache.string()));
    qputenv("HF_ENDPOINT", server.endpoint().toUtf8());
    qputenv("HF_HOME", tmp.filePath(QStringLiteral("hf-home")).toUtf8());
    qunsetenv("HF_TOKEN");
    qunsetenv("HF_HUB_OFFLINE");

    MainWindow w;
    w.show();
    hubtest::Faults trickle;
    trickle.file = "model.safetensors";
    trickle.trickleBytes = 16 * 1024;
    trickle.trickleMs = 20;
    server.setFaults(trickle);
    DownloadDialog* dialog = w.modelMenu()->showDownloads();
    QVERIFY(dialog->isVisible() && !dialog->isModal());
    dialog->repository()->setEditText(QStringLiteral("test-org/tiny-gpt2"));
    dialog->startDownload();
    QVERIFY(dialog->isDownloading());
    QTRY_VERIFY_WITH_TIMEOUT(dialog->fileBar()->value() > 0 && dialog->fileBar()->format().contains(QStringLiteral(" of ")), testing::kWorkTimeoutMs);
    // The window still answers: typing reaches the document and is computed while the weights arrive.
    w.sentenceEdit()->setText(QStringLiteral("typing during a download"));
    w.document()->waitForIdle();
    QCOMPARE(w.tokenChips()->chipCount(), int(w.document()->snapshot()->tokens.ids.size()));
    QVERIFY(dialog->isDownloading());
    dialog->cancelDownload();
    QVERIFY(!dialog->isDownloading());
    QVERIFY2(dialog->statusLabel()->text().contains(QStringLiteral("cancelled")), qPrintable(dialog->statusLabel()->text()));
    QVERIFY(std::filesystem::exists(snapshot / "config.json"));  // complete, kept
    QVERIFY(!std::filesystem::exists(snapshot / "model.safetensors"));
    QVERIFY(!std::filesystem::exists(cache / "models--test-org--tiny-gpt2" / "refs" / "main"));

    server.setFaults({});
    server.clearRequests();
    QSignalSpy opened(&w, &MainWindow::modelOpenFinished);
    dialog->startDownload();
    QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty(), testing::kWorkTimeoutMs);
    QCOMPARE(opened.last().at(0).toString(), QStringLiteral("hf:test-org/tiny-gpt2"));
    QCOMPARE(opened.last().at(1).toBool(), true);
    QCOMPARE(QString::fromStdString(w.document()->model()->config.name), QStringLiteral("test-org/tiny-gpt2"));
    QVERIFY(!dialog->isVisible());
    int resumed = 0;
    for (const hubtest::Request& r : server.requests()) resumed += r.range.startsWith("bytes=") && !r.range.startsWith("bytes=0-");
    QCOMPARE(resumed, 1);  // from what arrived before Cancel, not from zero
    QCOMPARE(Preferences::recentModels().value(0), QStringLiteral("hf:test-org/tiny-gpt2"));

    Preferences::removeRecentModel(QStringLiteral("hf:test-org/tiny-gpt2"));
    for (const char* name : {"HF_HUB_CACHE", "HF_ENDPOINT", "HF_HOME"}) qunsetenv(name);
}

// The built-in translator cannot read the default sentence: a window still on it moves to one the translator
// reads, every word of it known; a sentence a person typed stays as it was.
void TestMainWindow::theTranslatorOpensOnASentenceItReads()
{
    MainWindow w;
    w.sentenceEdit()->setText(kDefaultSentence);
    QVERIFY(w.openModel(QStringLiteral("builtin-translator")).ok());
    QCOMPARE(w.document()->text(), kTranslatorSentence);
    w.document()->waitForIdle();
    const std::vector<std::string>& tokens = w.document()->snapshot()->tokens.tokens;
    QVERIFY(tokens.size() > 5);
    QVERIFY(std::find(tokens.begin(), tokens.end(), std::string("<unk>")) == tokens.end());

    QVERIFY(w.openModel(QStringLiteral("builtin")).ok());
    w.sentenceEdit()->setText(QStringLiteral("my own words, kept"));
    QVERIFY(w.openModel(QStringLiteral("builtin-translator")).ok());
    QCOMPARE(w.document()->text(), QStringLiteral("my own words, kept"));
}
