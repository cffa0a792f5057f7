/**
 * The XML schema of the content export, served at GET /public/export/content_export.xsd. Every
 * file the content export writes validates against it (test/exports.test.ts checks that with
 * libxml2). Kept as a module rather than a file beside it so that it loads the same way under
 * Node and under the test runner. A change that is not purely additive is a new namespace
 * version (`…:content-export:2`).
 */
export const CONTENT_EXPORT_NAMESPACE = 'urn:knowledge-network:content-export:1';

/** The attributes a question and a solution both have, in the order both list them. */
const POST_ATTRIBUTES = `    <xs:attribute name="id" type="xs:positiveInteger" use="required"/>
    <xs:attribute name="language" type="xs:string" use="required"/>
    <xs:attribute name="published" type="xs:dateTime"/>
    <xs:attribute name="created" type="xs:dateTime" use="required"/>
    <xs:attribute name="updated" type="xs:dateTime" use="required"/>
    <xs:attribute name="is_deleted" type="xs:boolean" use="required"/>
`;

export const CONTENT_EXPORT_XSD = `<?xml version="1.0" encoding="UTF-8"?>
<!--
  Content export of a knowledge network: every published question with its published solutions,
  comments, tags, category and authors. Texts are element content; descriptions are the HTML the
  API shows (escaped as XML text). Dates are ISO 8601 in UTC with milliseconds.
-->
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"
           xmlns="${CONTENT_EXPORT_NAMESPACE}"
           xmlns:ce="${CONTENT_EXPORT_NAMESPACE}"
           targetNamespace="${CONTENT_EXPORT_NAMESPACE}"
           elementFormDefault="qualified"
           attributeFormDefault="unqualified">

  <xs:element name="content_export">
    <xs:complexType>
      <xs:sequence>
        <xs:element name="question" type="Question" minOccurs="0" maxOccurs="unbounded"/>
      </xs:sequence>
      <xs:attribute name="version" type="xs:string" use="required" fixed="1"/>
      <xs:attribute name="network" type="xs:string" use="required"/>
      <xs:attribute name="export_id" type="xs:positiveInteger" use="required"/>
      <xs:attribute name="created" type="xs:dateTime" use="required"/>
      <!-- true: question posers are not exposed (their author elements carry only anonymised="true") -->
      <xs:attribute name="anonymised" type="xs:boolean" use="required"/>
      <!-- true: deleted questions, solutions and comments are left out -->
      <xs:attribute name="exclude_deleted" type="xs:boolean" use="required"/>
    </xs:complexType>
    <xs:unique name="questionId">
      <xs:selector xpath="ce:question"/>
      <xs:field xpath="@id"/>
    </xs:unique>
  </xs:element>

  <xs:complexType name="Question">
    <xs:sequence>
      <xs:element name="title" type="xs:string"/>
      <xs:element name="description" type="xs:string" minOccurs="0"/>
      <xs:element name="author" type="Author"/>
      <xs:element name="category" type="Category" minOccurs="0"/>
      <xs:element name="tags">
        <xs:complexType>
          <xs:sequence>
            <xs:element name="tag" type="Tag" minOccurs="0" maxOccurs="unbounded"/>
          </xs:sequence>
        </xs:complexType>
      </xs:element>
      <!-- comments on the question itself; comments on a solution are inside that solution -->
      <xs:element name="comments" type="Comments"/>
      <xs:element name="solutions">
        <xs:complexType>
          <xs:sequence>
            <xs:element name="solution" type="Solution" minOccurs="0" maxOccurs="unbounded"/>
          </xs:sequence>
        </xs:complexType>
      </xs:element>
    </xs:sequence>
${POST_ATTRIBUTES}    <xs:attribute name="view_count" type="xs:nonNegativeInteger" use="required"/>
    <xs:attribute name="upvote_count" type="xs:integer" use="required"/>
    <!-- the solutions in this file -->
    <xs:attribute name="solution_count" type="xs:nonNegativeInteger" use="required"/>
  </xs:complexType>

  <xs:complexType name="Solution">
    <xs:sequence>
      <xs:element name="author" type="Author"/>
      <xs:element name="description" type="xs:string"/>
      <xs:element name="comments" type="Comments"/>
    </xs:sequence>
${POST_ATTRIBUTES}    <xs:attribute name="rating" type="xs:decimal"/>
    <xs:attribute name="rating_count" type="xs:nonNegativeInteger" use="required"/>
    <xs:attribute name="upvote_count" type="xs:integer" use="required"/>
    <xs:attribute name="accepted_by_question_poser" type="xs:dateTime"/>
    <xs:attribute name="validity_period" type="xs:string"/>
    <xs:attribute name="expires" type="xs:dateTime"/>
  </xs:complexType>

  <xs:complexType name="Comments">
    <xs:sequence>
      <xs:element name="comment" type="Comment" minOccurs="0" maxOccurs="unbounded"/>
    </xs:sequence>
  </xs:complexType>

  <xs:complexType name="Comment">
    <xs:sequence>
      <xs:element name="author" type="Author"/>
      <xs:element name="description" type="xs:string"/>
    </xs:sequence>
    <xs:attribute name="id" type="xs:positiveInteger" use="required"/>
    <xs:attribute name="created" type="xs:dateTime" use="required"/>
    <xs:attribute name="updated" type="xs:dateTime" use="required"/>
    <xs:attribute name="is_deleted" type="xs:boolean" use="required"/>
    <xs:attribute name="upvote_count" type="xs:integer" use="required"/>
  </xs:complexType>

  <!--
    An author. anonymised="true" (and nothing else) for the question's poser in an anonymised
    export, wherever the poser appears in that question (question, solutions, comments).
    Otherwise id, and firstname, lastname, is_deleted when the network knows the user.
  -->
  <xs:complexType name="Author">
    <xs:attribute name="id" type="xs:positiveInteger"/>
    <xs:attribute name="firstname" type="xs:string"/>
    <xs:attribute name="lastname" type="xs:string"/>
    <xs:attribute name="is_deleted" type="xs:boolean"/>
    <xs:attribute name="anonymised" type="xs:boolean"/>
  </xs:complexType>

  <xs:complexType name="Category">
    <xs:attribute name="id" type="xs:positiveInteger" use="required"/>
    <xs:attribute name="name" type="xs:string" use="required"/>
  </xs:complexType>

  <!-- the tag label as text; id is the tag's uuid (concept_id of the API's concepts) -->
  <xs:complexType name="Tag">
    <xs:simpleContent>
      <xs:extension base="xs:string">
        <xs:attribute name="id" type="xs:string" use="required"/>
      </xs:extension>
    </xs:simpleContent>
  </xs:complexType>
</xs:schema>
`;
