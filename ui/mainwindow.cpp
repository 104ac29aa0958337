#include "mainwindow.h"

namespace attnscope {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    setWindowTitle(QStringLiteral("AttnScope"));
    resize(1200, 800);
}

} // namespace attnscope
