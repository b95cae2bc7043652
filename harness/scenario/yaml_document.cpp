#include "harness/scenario/yaml_document.hpp"

#include <yaml-cpp/eventhandler.h>

#include <sstream>
#include <vector>

namespace gauntlet::harness::yaml_read {
namespace {

// Keeps only where a document and its first node begin: the documents are
// counted here, their nodes built by YAML::Load.
class DocumentStarts final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { saw_node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { saw_node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
    saw_node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    saw_node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    saw_node(mark);
  }
  void OnMapEnd() override {}

  YAML::Mark start;
  YAML::Mark first_node = YAML::Mark::null_mark();

 private:
  void saw_node(const YAML::Mark& mark) {
    if (first_node.is_null()) first_node = mark;
  }
};

std::string quoted_char_at(const std::string& text, int pos) {
  if (pos < 0 || static_cast<std::size_t>(pos) >= text.size()) return "the end of the file";
  return "'" + std::string(1, text[static_cast<std::size_t>(pos)]) + "'";
}

}  // namespace

YAML::Node load_one_document(const Source& source, const std::string& text, std::string_view what) {
  try {
    // yaml-cpp's parser meets a token that cannot begin a node (a ',' outside
    // any flow collection) with an empty document that leaves the token in
    // place, so YAML::LoadAll never returns. A document that begins where the
    // one before it began is that token; three documents at most tell it
    // from a real second document.
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    std::vector<DocumentStarts> documents;
    while (documents.size() < 3) {
      DocumentStarts document;
      if (!parser.HandleNextDocument(document)) break;
      if (!documents.empty() && document.start.pos == documents.back().start.pos)
        source.fail(document.start, "unexpected " + quoted_char_at(text, document.start.pos) +
                                        ": no YAML value can begin here (a ',' outside [...] or {...}?)");
      documents.push_back(document);
    }
    if (documents.size() > 1) {
      const DocumentStarts& second = documents[1];
      source.fail(second.first_node.is_null() ? second.start : second.first_node,
                  std::string(what) + " holds exactly one YAML document");
    }
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    source.fail(e.mark, e.msg);
  }
}

}  // namespace gauntlet::harness::yaml_read
